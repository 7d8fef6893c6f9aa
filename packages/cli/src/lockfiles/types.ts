/** Package name -> the versions a lockfile pins for it (a package may appear in several versions). */
export type PackageVersions = Map<string, Set<string>>;

export type LockfileFormat = 'npm' | 'cargo' | 'go' | 'poetry' | 'requirements';
export const LOCKFILE_FORMATS: readonly LockfileFormat[] = [
  'npm',
  'cargo',
  'go',
  'poetry',
  'requirements',
];

/** A lockfile that cannot be read; the message names the file and, when known, the line. */
export class LockfileError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly reason: string,
    readonly column?: number,
  ) {
    super(
      `${file}${line !== undefined ? `:${line}${column !== undefined ? `:${column}` : ''}` : ''}: ${reason}`,
    );
  }
}

export function addVersion(out: PackageVersions, name: string, version: string): void {
  let set = out.get(name);
  if (!set) out.set(name, (set = new Set()));
  set.add(version);
}

/** 1-based line and column of a character offset. */
export function lineOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lastNl = -1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lastNl = i;
    }
  }
  return { line, column: offset - lastNl };
}

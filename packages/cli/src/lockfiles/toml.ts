import { parse, TomlError } from 'smol-toml';
import { addVersion, LockfileError, type PackageVersions } from './types.ts';

function parseToml(text: string, file: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof TomlError) {
      const reason = err.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      throw new LockfileError(file, err.line, `invalid TOML: ${reason}`, err.column);
    }
    throw new LockfileError(file, undefined, `invalid TOML: ${(err as Error).message}`);
  }
}

/** Line of the n-th (0-based) `[[package]]` header, to point at a bad entry. */
function packageLine(text: string, n: number): number | undefined {
  let seen = -1;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++)
    if (lines[i]!.trim() === '[[package]]' && ++seen === n) return i + 1;
  return undefined;
}

/** PEP 503: "Foo_Bar.baz" and "foo-bar-baz" are one Python package. */
export function normalizePythonName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

/** Cargo.lock and poetry.lock: both are `[[package]]` tables with name and version. */
function parsePackageTables(
  text: string,
  file: string,
  kind: string,
  normalize: (n: string) => string,
  keep: (p: Record<string, unknown>) => boolean = () => true,
): PackageVersions {
  const doc = parseToml(text, file);
  const packages = doc.package;
  if (!Array.isArray(packages))
    throw new LockfileError(file, undefined, `not a ${kind}: no [[package]] entries`);
  const out: PackageVersions = new Map();
  packages.forEach((p: Record<string, unknown>, i) => {
    if (typeof p.name !== 'string' || typeof p.version !== 'string')
      throw new LockfileError(
        file,
        packageLine(text, i),
        `[[package]] #${i + 1} needs a string "name" and "version"`,
      );
    if (keep(p)) addVersion(out, normalize(p.name), p.version);
  });
  return out;
}

// Crates without a `source` are the workspace's own (path) crates: their changes are code deploys, not dependency bumps.
export const parseCargoLock = (text: string, file: string) =>
  parsePackageTables(
    text,
    file,
    'Cargo.lock',
    (n) => n,
    (p) => typeof p.source === 'string',
  );
export const parsePoetryLock = (text: string, file: string) =>
  parsePackageTables(text, file, 'poetry.lock', normalizePythonName);

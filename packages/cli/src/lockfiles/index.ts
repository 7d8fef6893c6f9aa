import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parsePackageLock } from './npm.ts';
import { parseCargoLock, parsePoetryLock } from './toml.ts';
import { parseGoSum } from './gosum.ts';
import { parseRequirements } from './requirements.ts';
import {
  LockfileError,
  LOCKFILE_FORMATS,
  type LockfileFormat,
  type PackageVersions,
} from './types.ts';

export {
  LockfileError,
  LOCKFILE_FORMATS,
  type LockfileFormat,
  type PackageVersions,
} from './types.ts';

const PARSERS: Record<LockfileFormat, (text: string, file: string) => PackageVersions> = {
  npm: parsePackageLock,
  cargo: parseCargoLock,
  go: parseGoSum,
  poetry: parsePoetryLock,
  requirements: parseRequirements,
};

/**
 * The format from a file name. Suffix matches, so the copy a CI step makes of
 * the previous revision ("old.Cargo.lock", "base-package-lock.json") still counts.
 */
export function formatFromName(file: string): LockfileFormat | null {
  const name = path.basename(file).toLowerCase();
  if (name.endsWith('package-lock.json') || name.endsWith('npm-shrinkwrap.json')) return 'npm';
  if (name.endsWith('cargo.lock')) return 'cargo';
  if (name.endsWith('go.sum')) return 'go';
  if (name.endsWith('poetry.lock')) return 'poetry';
  if (name.includes('requirements') && name.endsWith('.txt')) return 'requirements';
  return null;
}

export function readLockfile(file: string, format: LockfileFormat): PackageVersions {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new LockfileError(
      file,
      undefined,
      `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  return PARSERS[format](text, file);
}

export interface DependencyChange {
  component: string;
  /** Versions only the old lockfile has (comma-separated); null when the package is new. */
  from: string | null;
  /** Versions only the new lockfile has; null when the package was removed. */
  to: string | null;
}

const byVersion = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

/** One change per package whose set of locked versions differs, sorted by name. */
export function diffPackages(before: PackageVersions, after: PackageVersions): DependencyChange[] {
  const names = [...new Set([...before.keys(), ...after.keys()])].sort();
  const changes: DependencyChange[] = [];
  for (const component of names) {
    const a = before.get(component) ?? new Set<string>();
    const b = after.get(component) ?? new Set<string>();
    const removed = [...a].filter((v) => !b.has(v)).sort(byVersion);
    const added = [...b].filter((v) => !a.has(v)).sort(byVersion);
    if (!removed.length && !added.length) continue;
    changes.push({ component, from: removed.join(', ') || null, to: added.join(', ') || null });
  }
  return changes;
}

/** Read both files (format from --lockfile-format or their names) and diff them. */
export function diffLockfiles(
  oldFile: string,
  newFile: string,
  format?: LockfileFormat,
): { format: LockfileFormat; changes: DependencyChange[] } {
  const fmt = format ?? formatFromName(newFile) ?? formatFromName(oldFile);
  if (!fmt)
    throw new LockfileError(
      newFile,
      undefined,
      'cannot tell the lockfile format from the name; expected package-lock.json, Cargo.lock, go.sum, poetry.lock or requirements*.txt, ' +
        `or pass --lockfile-format (${LOCKFILE_FORMATS.join(', ')})`,
    );
  return {
    format: fmt,
    changes: diffPackages(readLockfile(oldFile, fmt), readLockfile(newFile, fmt)),
  };
}

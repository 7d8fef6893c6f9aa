import { addVersion, LockfileError, type PackageVersions } from './types.ts';

/**
 * go.sum: "<module> <version>[/go.mod] <hash>" per line. Lines for `/go.mod`
 * only record a module graph visit; the code actually built is the lines
 * without the suffix, so only those count as the module's versions.
 */
export function parseGoSum(text: string, file: string): PackageVersions {
  const out: PackageVersions = new Map();
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    const fields = line.split(/\s+/);
    if (fields.length !== 3 || !/^[a-z0-9]+:/.test(fields[2]!) || !fields[1]!.startsWith('v'))
      throw new LockfileError(
        file,
        i + 1,
        `expected "<module> <version> <hash>", got "${line.slice(0, 80)}"`,
      );
    const [module, version] = fields as [string, string, string];
    if (version.endsWith('/go.mod')) return;
    addVersion(out, module, version);
  });
  return out;
}

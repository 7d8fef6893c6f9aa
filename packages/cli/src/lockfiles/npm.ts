import { parse as parseLenient, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { addVersion, LockfileError, lineOf, type PackageVersions } from './types.ts';

/**
 * JSON.parse, but a syntax error names the line: Node's own messages give a
 * character position at best, so the error is located with jsonc-parser.
 */
function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const errors: ParseError[] = [];
    parseLenient(text, errors, {
      disallowComments: true,
      allowTrailingComma: false,
      allowEmptyContent: false,
    });
    const first = errors[0];
    if (!first) throw new LockfileError(file, undefined, `invalid JSON: ${(err as Error).message}`);
    const { line, column } = lineOf(text, first.offset);
    const what = printParseErrorCode(first.error)
      .replace(/([a-z])([A-Z])/g, '$1 $2')
      .toLowerCase();
    throw new LockfileError(file, line, `invalid JSON: ${what}`, column);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * package-lock.json / npm-shrinkwrap.json, lockfileVersion 1 to 3.
 * v2/v3 list every installed copy under "packages" keyed by its path
 * ("node_modules/a/node_modules/b"); v1 nests "dependencies".
 */
export function parsePackageLock(text: string, file: string): PackageVersions {
  const doc = parseJson(text, file);
  const out: PackageVersions = new Map();
  if (!isObject(doc))
    throw new LockfileError(file, 1, 'not a package-lock.json: the top level is not a JSON object');
  if (isObject(doc.packages)) {
    for (const [key, entry] of Object.entries(doc.packages)) {
      const at = key.lastIndexOf('node_modules/');
      // "" is the project itself, "packages/x" a workspace: neither is a dependency.
      if (at < 0 || !isObject(entry)) continue;
      if (entry.link === true || typeof entry.version !== 'string') continue;
      addVersion(out, key.slice(at + 'node_modules/'.length), entry.version);
    }
    return out;
  }
  if (isObject(doc.dependencies)) {
    const walk = (deps: Record<string, unknown>) => {
      for (const [name, entry] of Object.entries(deps)) {
        if (!isObject(entry)) continue;
        if (typeof entry.version === 'string') addVersion(out, name, entry.version);
        if (isObject(entry.dependencies)) walk(entry.dependencies);
      }
    };
    walk(doc.dependencies);
    return out;
  }
  throw new LockfileError(
    file,
    undefined,
    'not a package-lock.json: it has neither a "packages" nor a "dependencies" object',
  );
}

import { normalizePythonName } from './toml.ts';
import { addVersion, LockfileError, type PackageVersions } from './types.ts';

// name[extras] (== | === | ~= | >= ...) version ; markers   or   name[extras] @ url
const REQ =
  /^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:(===|==|~=|!=|<=|>=|<|>)\s*([^\s;,]+)(?:\s*,[^;]*)?|@\s*(\S+))?\s*(?:;.*)?$/;

/**
 * requirements.txt (pip freeze / pip-compile output). Pinned `==` versions
 * are the point; other specifiers are kept as written (">=2.0") so a changed
 * constraint still shows up. Options (-r, -e, --hash, --index-url) are skipped.
 */
export function parseRequirements(text: string, file: string): PackageVersions {
  const out: PackageVersions = new Map();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let line = lines[i]!;
    // Backslash continuations (pip-compile puts --hash options on them).
    while (/\\\s*$/.test(line) && i + 1 < lines.length)
      line = line.replace(/\\\s*$/, ' ') + lines[++i]!;
    line = line.replace(/(^|\s)#.*$/, '').trim();
    if (line === '' || line.startsWith('-')) continue;
    line = line.replace(/\s--hash[= ]\S+/g, '').trim();
    const m = REQ.exec(line);
    if (!m)
      throw new LockfileError(file, start + 1, `cannot read requirement "${line.slice(0, 80)}"`);
    const [, name, op, version, url] = m;
    const pinned =
      url !== undefined
        ? url
        : op === '==' || op === '==='
          ? version!
          : op
            ? `${op}${version}`
            : '*';
    addVersion(out, normalizePythonName(name!), pinned);
  }
  return out;
}

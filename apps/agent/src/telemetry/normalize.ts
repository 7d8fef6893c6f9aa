/**
 * Series names from traced paths, with the parts that differ per run folded.
 *
 * Onset makes one series per fsync'd directory (`file.directory`) and per
 * spawned executable (`process.executable.name`). Traced host-wide, temporary
 * and per-process directories (`/tmp/tmp.Xk3Fa9`, `/proc/4242`, a
 * `mkdtemp` per test run, container ids) would each become a series of a few
 * points that never comes back. Here a path component that looks generated is
 * replaced by `*`, so those fold into one series per pattern
 * (`/tmp/tmp.*`, `/proc/*`), while the real path stays on the span
 * (`file.path`, `onset.fsync.directory`, `process.executable.path`).
 *
 * Deliberately conservative: a component is folded only when it is
 *  - all digits (pids, uids, timestamps): `4242` -> `*`;
 *  - a hex string of 12+ characters or a UUID (hashes, container ids);
 *  - a word, a separator (`.`, `-`, `_`) and a generated-looking suffix of 6+
 *    letters and digits: mixing digits and letters, or with two or more
 *    capitals among lower-case letters (mktemp, mkdtemp): `tmp.Xk3Fa9` ->
 *    `tmp.*`, `onset-bench-q8ZLmN` -> `onset-bench-*`;
 *  - Python's `tempfile` names, `tmp` and 8 characters with a digit.
 * Names people choose (`data`, `pg_wal`, `python3.11`, `node-v20`) are kept.
 */
const DIGITS = /^\d+$/;
const HEX = /^(?:[0-9a-f]{12,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
const SUFFIXED = /^(.*[^.\-_][.\-_])([A-Za-z0-9]{6,})$/;
const PY_TEMP = /^tmp[a-z0-9_]{8}$/;

function generated(suffix: string): boolean {
  const digits = /\d/.test(suffix);
  const letters = /[A-Za-z]/.test(suffix);
  if (digits && letters) return true;
  const capitals = suffix.replace(/[^A-Z]/g, '').length;
  return capitals >= 2 && /[a-z]/.test(suffix);
}

/** One path component, or `*` / `prefix.*` when it looks generated. */
export function normalizeComponent(name: string): string {
  if (DIGITS.test(name) || HEX.test(name)) return '*';
  if (PY_TEMP.test(name) && /\d/.test(name)) return 'tmp*';
  const m = SUFFIXED.exec(name);
  if (m && generated(m[2]!)) return `${m[1]}*`;
  return name;
}

const cache = new Map<string, string>();

/** A path with its generated-looking components folded (see above). */
export function normalizePath(p: string): string {
  let out = cache.get(p);
  if (out === undefined) {
    out = p.split('/').map(normalizeComponent).join('/');
    if (cache.size >= 10_000) cache.clear();
    cache.set(p, out);
  }
  return out;
}

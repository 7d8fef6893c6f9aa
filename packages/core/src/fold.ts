/**
 * Generated-looking parts of names, folded so they do not become one series
 * each. Two callers share the one rule:
 *  - the agent names series after host paths and folds a generated component
 *    to `*` (`/proc/4242` -> `/proc/*`, `/tmp/tmp.Xk3Fa9` -> `/tmp/tmp.*`);
 *  - the server templates un-templated request names before series resolution
 *    (`GET /users/12345` -> `GET /users/{id}`), see `templateName`.
 *
 * Deliberately conservative: a component is folded only when it is
 *  - all digits (ids, pids, uids, timestamps): `4242` -> id;
 *  - a UUID -> uuid; a hex string of 12+ characters (hashes, container ids) -> hash;
 *  - an opaque token: 16+ characters of letters, digits, `-`, `_`, `=`, `.`,
 *    `~`, mixing letters and digits (session ids, base64url, JWT parts) -> token;
 *  - a word, a separator (`.`, `-`, `_`) and a generated-looking suffix of 6+
 *    letters and digits: mixing digits and letters, or with two or more
 *    capitals among lower-case letters (mktemp, mkdtemp): `tmp.Xk3Fa9` ->
 *    `tmp.` + token, `onset-bench-q8ZLmN` -> `onset-bench-` + token;
 *  - Python's `tempfile` names, `tmp` and 8 characters with a digit.
 * Names people choose (`data`, `pg_wal`, `python3.11`, `node-v20`, `v2`,
 * `users`, `checkout-service`) are kept.
 */
export type GeneratedKind = 'id' | 'uuid' | 'hash' | 'token';

export interface GeneratedPart {
  /** What the component looks like. */
  kind: GeneratedKind;
  /** A chosen prefix kept in front of the generated part ('' when the whole component is generated). */
  prefix: string;
}

const DIGITS = /^\d+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX = /^[0-9a-f]{12,}$/i;
const OPAQUE = /^[A-Za-z0-9_\-=.~]{16,}$/;
const SUFFIXED = /^(.*[^.\-_][.\-_])([A-Za-z0-9]{6,})$/;
const PY_TEMP = /^tmp[a-z0-9_]{8}$/;

function mixed(s: string): boolean {
  return /\d/.test(s) && /[A-Za-z]/.test(s);
}

function generatedSuffix(suffix: string): boolean {
  if (mixed(suffix)) return true;
  const capitals = suffix.replace(/[^A-Z]/g, '').length;
  return capitals >= 2 && /[a-z]/.test(suffix);
}

/** How one name component (between `/`) looks generated, or null when a person chose it. */
export function generatedPart(component: string): GeneratedPart | null {
  if (DIGITS.test(component)) return { kind: 'id', prefix: '' };
  if (UUID.test(component)) return { kind: 'uuid', prefix: '' };
  if (HEX.test(component)) return { kind: 'hash', prefix: '' };
  if (PY_TEMP.test(component) && /\d/.test(component)) return { kind: 'token', prefix: 'tmp' };
  const m = SUFFIXED.exec(component);
  if (m && generatedSuffix(m[2]!)) return { kind: 'token', prefix: m[1]! };
  if (OPAQUE.test(component) && mixed(component)) return { kind: 'token', prefix: '' };
  return null;
}

/** `{id}`, `{uuid}`, `{hash}`, `{token}`: the placeholders request names are templated with. */
export function placeholder(kind: GeneratedKind): string {
  return `{${kind}}`;
}

/**
 * A span name with its generated path components replaced by placeholders:
 * `GET /users/12345` -> `GET /users/{id}`, `/orders/3fa85f64-5717-4562-b3fc-2c963f66afa6/items`
 * -> `/orders/{uuid}/items`, `GET /blobs/9f86d081884c7d65` -> `GET /blobs/{hash}`.
 * A query string or fragment after a path is dropped (`GET /search?q=x` -> `GET /search`).
 * Names without generated parts come back unchanged.
 */
export function templateName(name: string): string {
  if (unchangedNames.has(name)) return name;
  let path = name;
  const slash = name.indexOf('/');
  if (slash >= 0) {
    const query = name.slice(slash).search(/[?#]/);
    if (query >= 0) path = name.slice(0, slash + query);
  }
  let changed = path !== name;
  const parts = path.split('/');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    // `GET ` (method and space) never looks generated: only whole components fold.
    if (!part || keptParts.has(part)) continue;
    const g = generatedPart(part);
    if (g) {
      parts[i] = g.prefix + placeholder(g.kind);
      changed = true;
    } else remember(keptParts, part);
  }
  if (!changed) remember(unchangedNames, name);
  return changed ? parts.join('/') : name;
}

/*
 * Every span named by its span name is templated (classify.ts), so what repeats is remembered:
 * names with nothing to fold (`GET /items/{id}`, `fsync`) and components a person chose
 * (`GET `, `items`). Generated parts are unique by nature and never kept. Bounded: a set that
 * fills up starts again.
 */
const MAX_REMEMBERED = 4096;
const unchangedNames = new Set<string>();
const keptParts = new Set<string>();
function remember(set: Set<string>, s: string): void {
  if (set.size >= MAX_REMEMBERED) set.clear();
  set.add(s);
}

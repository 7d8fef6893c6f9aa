/**
 * What Grafana does to a PostgreSQL panel query before it reaches the
 * database, for tests: template variables first (the frontend's
 * interpolateVariable for SQL data sources), then the backend's global
 * substitutions and the postgres macro engine
 * (pkg/tsdb/grafana-postgresql-datasource/macros.go).
 */

export interface TimeRange {
  from: Date;
  to: Date;
  intervalMs: number;
}

/** Template variable values; `multi` mirrors the variable's multi/includeAll flags. */
export type Variables = Record<string, { values: string[]; multi: boolean }>;

const quoteLiteral = (v: string) => `'${v.replace(/'/g, "''")}'`;

/** The SQL data sources' interpolateVariable: multi-value or "All" → quoted list; single → raw with quotes doubled. */
function formatVariable(v: { values: string[]; multi: boolean }): string {
  if (v.multi || v.values.length !== 1) return v.values.map(quoteLiteral).join(',');
  return v.values[0]!.replace(/'/g, "''");
}

export function interpolateVariables(sql: string, vars: Variables): string {
  return sql.replace(
    /\$(\w+)|\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]/g,
    (m, a?: string, b?: string, c?: string) => {
      const name = a ?? b ?? c!;
      if (name.startsWith('__')) return m; // Grafana's own: $__interval, macros
      const v = vars[name];
      if (!v) throw new Error(`query uses unknown template variable $${name}`);
      return formatVariable(v);
    },
  );
}

/** gtime.FormatInterval: the largest unit that divides evenly ("1m", "5m", "1h", "30s", "1d"). */
function formatInterval(ms: number): string {
  const units: Array<[string, number]> = [
    ['y', 31_536_000_000],
    ['w', 604_800_000],
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  for (const [u, size] of units) if (ms >= size && ms % size === 0) return `${ms / size}${u}`;
  return `${ms}ms`;
}

function parseInterval(s: string): number {
  const m = /^(\d+)(ms|s|m|h|d|w|y)$/.exec(s.trim().replace(/^'|'$/g, ''));
  if (!m) throw new Error(`bad interval ${s}`);
  const unit = {
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
    d: 86_400_000,
    w: 604_800_000,
    y: 31_536_000_000,
  }[m[2] as 'ms'];
  return Number(m[1]) * unit;
}

const rfc3339 = (d: Date) => d.toISOString().replace('.000Z', 'Z');

export function expandMacros(sql: string, range: TimeRange): string {
  // sqleng.Interpolate: global substitutions.
  let out = sql
    .replaceAll('$__interval_ms', String(range.intervalMs))
    .replaceAll('$__interval', formatInterval(range.intervalMs))
    .replaceAll('$__unixEpochFrom()', String(Math.floor(range.from.getTime() / 1000)))
    .replaceAll('$__unixEpochTo()', String(Math.floor(range.to.getTime() / 1000)));
  // The postgres macro engine: $name(args) with args split on commas.
  out = out.replace(/\$([_a-zA-Z0-9]+)\(([^)]*)\)/g, (whole, name: string, rawArgs: string) => {
    const args = rawArgs.split(',').map((a) => a.trim());
    const group = (col: string, interval: string) => {
      const secs = parseInterval(interval) / 1000;
      return `floor(extract(epoch from ${col})/${secs})*${secs}`;
    };
    switch (name) {
      case '__time':
        return `${args[0]} AS "time"`;
      case '__timeEpoch':
        return `extract(epoch from ${args[0]}) as "time"`;
      case '__timeFilter':
        return `${args[0]} BETWEEN '${rfc3339(range.from)}' AND '${rfc3339(range.to)}'`;
      case '__timeFrom':
        return `'${rfc3339(range.from)}'`;
      case '__timeTo':
        return `'${rfc3339(range.to)}'`;
      case '__timeGroup':
        return group(args[0]!, args[1]!);
      case '__timeGroupAlias':
        return `${group(args[0]!, args[1]!)} AS "time"`;
      case '__unixEpochFilter':
        return `${args[0]} >= ${Math.floor(range.from.getTime() / 1000)} AND ${args[0]} <= ${Math.floor(range.to.getTime() / 1000)}`;
      default:
        throw new Error(`unknown macro ${whole}`);
    }
  });
  return out;
}

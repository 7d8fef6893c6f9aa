/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4),
 * for tests: it throws on anything Prometheus would refuse to scrape and
 * returns the metric families so tests can read values.
 */

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string | undefined;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(raw: string, line: number): number {
  // Prometheus reads values with Go's strconv.ParseFloat: NaN and Inf in any case.
  if (/^nan$/i.test(raw)) return NaN;
  if (/^\+?inf(inity)?$/i.test(raw)) return Infinity;
  if (/^-inf(inity)?$/i.test(raw)) return -Infinity;
  if (!/^[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)$/.test(raw))
    throw new Error(`line ${line}: bad sample value "${raw}"`);
  return Number(raw);
}

/** name{a="b",c="d"} value [timestamp] */
function parseSample(text: string, line: number): Sample {
  let i = 0;
  while (i < text.length && /[a-zA-Z0-9_:]/.test(text[i]!)) i++;
  const name = text.slice(0, i);
  if (!METRIC_NAME.test(name)) throw new Error(`line ${line}: bad metric name "${name}"`);
  const labels: Record<string, string> = {};
  if (text[i] === '{') {
    i++;
    for (;;) {
      while (text[i] === ' ') i++;
      if (text[i] === '}') {
        i++;
        break;
      }
      let j = i;
      while (j < text.length && /[a-zA-Z0-9_]/.test(text[j]!)) j++;
      const label = text.slice(i, j);
      if (!LABEL_NAME.test(label)) throw new Error(`line ${line}: bad label name "${label}"`);
      if (label in labels) throw new Error(`line ${line}: label "${label}" repeated`);
      if (text[j] !== '=' || text[j + 1] !== '"')
        throw new Error(`line ${line}: expected ="…" after label ${label}`);
      j += 2;
      let value = '';
      for (;;) {
        const c = text[j];
        if (c === undefined) throw new Error(`line ${line}: unterminated label value`);
        if (c === '"') break;
        if (c === '\\') {
          const n = text[j + 1];
          if (n === '\\') value += '\\';
          else if (n === '"') value += '"';
          else if (n === 'n') value += '\n';
          else throw new Error(`line ${line}: bad escape \\${n} in label value`);
          j += 2;
          continue;
        }
        value += c;
        j++;
      }
      labels[label] = value;
      i = j + 1;
      if (text[i] === ',') i++;
      else if (text[i] !== '}')
        throw new Error(`line ${line}: expected , or } after label ${label}`);
    }
  }
  if (text[i] !== ' ') throw new Error(`line ${line}: expected a space before the value`);
  const rest = text
    .slice(i + 1)
    .trim()
    .split(/\s+/);
  if (rest.length < 1 || rest.length > 2)
    throw new Error(`line ${line}: expected "value [timestamp]"`);
  const value = parseValue(rest[0]!, line);
  if (rest[1] !== undefined && !/^-?\d+$/.test(rest[1]))
    throw new Error(`line ${line}: bad timestamp "${rest[1]}"`);
  return { name, labels, value };
}

function familyOf(sample: string, families: Map<string, Family>): string {
  if (families.has(sample)) return sample;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (sample.endsWith(suffix)) {
      const base = sample.slice(0, -suffix.length);
      const f = families.get(base);
      if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket')))
        return base;
    }
  }
  return sample;
}

export function parseExposition(body: string): Map<string, Family> {
  if (body.length && !body.endsWith('\n')) throw new Error('exposition must end with a newline');
  const families = new Map<string, Family>();
  const seenSeries = new Set<string>();
  const closed = new Set<string>();
  let current: string | null = null;
  const lines = body.split('\n');
  lines.pop();
  lines.forEach((text, k) => {
    const line = k + 1;
    if (text.trim() === '') return;
    if (text.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(text);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m;
      if (!METRIC_NAME.test(name!)) throw new Error(`line ${line}: bad metric name in ${kind}`);
      let f = families.get(name!);
      if (f && f.samples.length)
        throw new Error(`line ${line}: ${kind} for ${name} after its samples`);
      if (!f) {
        f = { name: name!, type: 'untyped', help: undefined, samples: [] };
        families.set(name!, f);
      }
      if (kind === 'TYPE') {
        if (!TYPES.has(rest ?? '')) throw new Error(`line ${line}: unknown type "${rest}"`);
        f.type = rest as Family['type'];
      } else {
        if (f.help !== undefined) throw new Error(`line ${line}: second HELP for ${name}`);
        f.help = rest ?? '';
      }
      return;
    }
    const s = parseSample(text, line);
    const fam = familyOf(s.name, families);
    if (current !== fam) {
      if (current) closed.add(current);
      if (closed.has(fam))
        throw new Error(`line ${line}: samples of ${fam} are not grouped together`);
      current = fam;
    }
    let f = families.get(fam);
    if (!f) {
      f = { name: fam, type: 'untyped', help: undefined, samples: [] };
      families.set(fam, f);
    }
    const key = `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}`;
    if (seenSeries.has(key)) throw new Error(`line ${line}: duplicate series ${key}`);
    seenSeries.add(key);
    if (f.type === 'counter' && s.value < 0)
      throw new Error(`line ${line}: negative counter ${s.name}`);
    f.samples.push(s);
  });

  for (const f of families.values()) {
    if (f.type !== 'histogram') continue;
    // Per label set (without le): cumulative buckets ending in +Inf, and _count equal to it.
    const groups = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
    for (const s of f.samples) {
      const { le, ...rest } = s.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      const g = groups.get(key) ?? { buckets: [] };
      groups.set(key, g);
      if (s.name === `${f.name}_bucket`) {
        if (le === undefined) throw new Error(`${f.name}_bucket without le`);
        g.buckets.push([parseValue(le, 0), s.value]);
      } else if (s.name === `${f.name}_count`) g.count = s.value;
    }
    for (const [key, g] of groups) {
      const sorted = [...g.buckets].sort((a, b) => a[0] - b[0]);
      if (sorted.at(-1)?.[0] !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket`);
      for (let i = 1; i < sorted.length; i++)
        if (sorted[i]![1] < sorted[i - 1]![1])
          throw new Error(`${f.name}${key}: buckets are not cumulative`);
      if (g.count !== sorted.at(-1)![1])
        throw new Error(`${f.name}${key}: _count differs from the +Inf bucket`);
    }
  }
  return families;
}

/** Value of one series, or 0 when the family has no sample with these labels (a counter not yet moved). */
export function valueOf(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const f = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
  if (!f) throw new Error(`metric ${name} is not exposed`);
  const s = f.samples.find(
    (x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v),
  );
  return s?.value ?? 0;
}

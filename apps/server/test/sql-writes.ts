/**
 * The SQL a server source file sends, and which tables each statement
 * writes (ownership.test.ts). Strings are read with the TypeScript parser:
 * string literals and template literals (a `${...}` that names a table
 * through a variable becomes DYNAMIC; `${partitionName('t', ...)}` is
 * table t), plus the string arguments of COPY helpers (`copyIn(c, 't', ...)`,
 * `copyInto(c, 't (cols)', ...)`), which are COPY targets.
 */
import ts from 'typescript';

export const DYNAMIC = '__dynamic__';

export type WriteVerb =
  | 'INSERT'
  | 'UPDATE'
  | 'DELETE'
  | 'COPY'
  | 'TRUNCATE'
  | 'MERGE'
  | 'ALTER'
  | 'DROP'
  | 'PARTITION OF';

export interface SqlWrite {
  verb: WriteVerb;
  /** Lower-case, schema and quotes removed; DYNAMIC when a variable names it. */
  table: string;
}

const ID = String.raw`(?:"?[A-Za-z_][\w$]*"?\.)?"?[A-Za-z_][\w$]*"?`;
const LIST = String.raw`${ID}(?:\s*,\s*${ID})*`;

const PATTERNS: Array<[WriteVerb, RegExp]> = [
  ['INSERT', new RegExp(String.raw`\bINSERT\s+INTO\s+(${ID})`, 'gi')],
  [
    'UPDATE',
    new RegExp(
      String.raw`(?<!\b(?:DO|FOR|KEY|NO)\s+)\bUPDATE\s+(?:ONLY\s+)?(${ID})(?:\s+(?:AS\s+)?[A-Za-z_]\w*)?\s+SET\b`,
      'gi',
    ),
  ],
  ['DELETE', new RegExp(String.raw`\bDELETE\s+FROM\s+(?:ONLY\s+)?(${ID})`, 'gi')],
  ['COPY', new RegExp(String.raw`\bCOPY\s+(${ID})(?:\s*\([^)]*\))?\s+FROM\b`, 'gi')],
  ['TRUNCATE', new RegExp(String.raw`\bTRUNCATE\s+(?:TABLE\s+)?(?:ONLY\s+)?(${LIST})`, 'gi')],
  ['MERGE', new RegExp(String.raw`\bMERGE\s+INTO\s+(?:ONLY\s+)?(${ID})`, 'gi')],
  ['ALTER', new RegExp(String.raw`\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?(${ID})`, 'gi')],
  ['DROP', new RegExp(String.raw`\bDROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(${LIST})`, 'gi')],
  ['PARTITION OF', new RegExp(String.raw`\bPARTITION\s+OF\s+(${ID})`, 'gi')],
];

const KEYWORDS = new Set(['set', 'select', 'values', 'only', 'table', 'if', 'the']);

function bare(name: string): string {
  const parts = name.replace(/"/g, '').toLowerCase().split('.');
  return parts[parts.length - 1]!;
}

/** The tables one SQL string writes (comments removed first). */
export function sqlWrites(sql: string): SqlWrite[] {
  const text = sql.replace(/--[^\n]*/g, ' ').replace(/\/\*[\s\S]*?\*\//g, ' ');
  const out: SqlWrite[] = [];
  for (const [verb, re] of PATTERNS) {
    re.lastIndex = 0;
    for (const m of text.matchAll(re)) {
      for (const name of m[1]!.split(',')) {
        const raw = bare(name.trim());
        if (KEYWORDS.has(raw)) continue;
        // `${a}${b}` and `x_${day}`: a name a variable builds.
        const table = raw.includes(DYNAMIC) ? DYNAMIC : raw;
        out.push({ verb, table });
      }
    }
  }
  return out;
}

/** Temporary tables a SQL string creates (they belong to the statement's file). */
export function tempTables(sql: string): string[] {
  const re = new RegExp(
    String.raw`\bCREATE\s+(?:TEMP|TEMPORARY)\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(${ID})`,
    'gi',
  );
  return [...sql.matchAll(re)].map((m) => bare(m[1]!));
}

/** Tables a SQL string reads or writes by name (FROM / JOIN / the write forms). */
export function sqlMentions(sql: string): string[] {
  const text = sql.replace(/--[^\n]*/g, ' ');
  const re = new RegExp(String.raw`\b(?:FROM|JOIN)\s+(?:ONLY\s+)?(${ID})`, 'gi');
  const read = [...text.matchAll(re)].map((m) => bare(m[1]!));
  return [...read, ...sqlWrites(sql).map((w) => w.table)];
}

export interface SourceSql {
  line: number;
  sql: string;
}

const isCopyHelper = (name: string) => /^copy[A-Z]/.test(name);

function templateText(node: ts.TemplateExpression, sf: ts.SourceFile): string {
  let s = node.head.text;
  for (const span of node.templateSpans) {
    const e = span.expression;
    if (
      ts.isCallExpression(e) &&
      ts.isIdentifier(e.expression) &&
      e.expression.text === 'partitionName' &&
      e.arguments[0] &&
      ts.isStringLiteralLike(e.arguments[0])
    )
      s += e.arguments[0].text;
    else if (ts.isIdentifier(e) || ts.isPropertyAccessExpression(e) || ts.isCallExpression(e))
      s += DYNAMIC;
    else s += `(${e.getText(sf)})`;
    s += span.literal.text;
  }
  return s;
}

/** Every string in a source file (COPY helpers' targets as `COPY <target> FROM STDIN`). */
export function sourceStrings(fileName: string, source: string): SourceSql[] {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const out: SourceSql[] = [];
  const lineOf = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
  const textOf = (n: ts.Node): string | null =>
    ts.isStringLiteralLike(n) ? n.text : ts.isTemplateExpression(n) ? templateText(n, sf) : null;
  const visit = (n: ts.Node): void => {
    const t = textOf(n);
    if (t !== null) out.push({ line: lineOf(n), sql: t });
    if (ts.isCallExpression(n)) {
      const callee = n.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : '';
      if (isCopyHelper(name))
        for (const a of n.arguments) {
          const at = textOf(a);
          if (at !== null && !/\bCOPY\b/i.test(at))
            out.push({ line: lineOf(a), sql: `COPY ${at} FROM STDIN` });
        }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

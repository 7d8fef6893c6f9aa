/**
 * One writer per table (docs/where-things-live.md): every SQL string in
 * apps/server/src is read, and a write (INSERT / UPDATE / DELETE / COPY ...
 * FROM / TRUNCATE / MERGE / ALTER / DROP / PARTITION OF) of a table from a
 * file outside the table's owning folder (apps/server/src/db/owners.ts) fails,
 * naming the file, the table and its owner (.ts and .mjs sources). No database: it reads sources.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DYNAMIC_WRITES, TABLE_OWNERS, type TableOwner } from '../src/db/owners.ts';
import { DYNAMIC, sourceStrings, sqlMentions, sqlWrites, tempTables } from './sql-writes.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const src = path.join(root, 'apps/server/src');
const owners: Record<string, TableOwner> = TABLE_OWNERS;

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) return tsFiles(p);
    return /\.(ts|mts|js|mjs)$/.test(n) && !n.endsWith('.d.ts') ? [p] : [];
  });
}

/** Tables the migrations create (partitions created inside DO blocks are their parent's). */
function migrationTables(): string[] {
  const dir = path.join(root, 'migrations');
  const out = new Set<string>();
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.sql'))) {
    const sql = readFileSync(path.join(dir, f), 'utf8');
    for (const m of sql.matchAll(
      /\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)\s*\(/gi,
    ))
      out.add(m[1]!.toLowerCase());
    for (const m of sql.matchAll(/\bALTER\s+TABLE\s+\w+\s+RENAME\s+TO\s+([a-z_][a-z0-9_]*)/gi))
      out.add(m[1]!.toLowerCase());
  }
  return [...out].sort();
}

/** A partition (`observations_p20261202`, `..._default`) is its parent table. */
function parentOf(table: string): string {
  if (table in owners) return table;
  const m = /^(.*)_(?:p\d{8}|default)$/.exec(table);
  return m && m[1]! in owners ? m[1]! : table;
}

const folderOf = (rel: string) => (rel.includes('/') ? rel.split('/')[0]! : '(root)');

interface Write {
  file: string; // relative to apps/server/src
  line: number;
  verb: string;
  table: string;
}

/** Every table write in apps/server/src; `extra` adds a source as if it were a file there. */
function collect(extra: Record<string, string> = {}) {
  const files = new Map<string, string>();
  for (const f of tsFiles(src)) files.set(path.relative(src, f), readFileSync(f, 'utf8'));
  for (const [rel, text] of Object.entries(extra)) files.set(rel, text);
  const writes: Write[] = [];
  const mentions: Write[] = [];
  const dynamicIn = new Set<string>();
  const temps = new Map<string, Set<string>>(); // folder -> temp tables it creates
  for (const [rel, text] of files) {
    for (const { line, sql } of sourceStrings(rel, text)) {
      for (const t of tempTables(sql)) {
        const set = temps.get(folderOf(rel)) ?? new Set();
        set.add(t);
        temps.set(folderOf(rel), set);
      }
      for (const w of sqlWrites(sql)) {
        if (w.table === DYNAMIC) {
          dynamicIn.add(rel);
          for (const t of DYNAMIC_WRITES[rel] ?? [])
            writes.push({ file: rel, line, verb: w.verb, table: t });
          if (!(rel in DYNAMIC_WRITES))
            writes.push({ file: rel, line, verb: w.verb, table: DYNAMIC });
        } else writes.push({ file: rel, line, verb: w.verb, table: parentOf(w.table) });
      }
      for (const t of sqlMentions(sql))
        if (t !== DYNAMIC) mentions.push({ file: rel, line, verb: 'query', table: parentOf(t) });
    }
  }
  const isTemp = (w: Write) => temps.get(folderOf(w.file))?.has(w.table) ?? false;
  return { writes: writes.filter((w) => !isTemp(w)), mentions, dynamicIn };
}

/** What is wrong with the writes: one line each, naming file, table and owner. */
function violations(c: ReturnType<typeof collect>): string[] {
  const out: string[] = [];
  for (const w of c.writes) {
    const where = `apps/server/src/${w.file}:${w.line}`;
    if (w.table === DYNAMIC) {
      out.push(
        `${where}: ${w.verb} on a table named by a variable; list the tables it can reach under DYNAMIC_WRITES in apps/server/src/db/owners.ts`,
      );
      continue;
    }
    const o = owners[w.table];
    if (!o) {
      out.push(`${where}: ${w.verb} ${w.table}, which no migration creates (not in db/owners.ts)`);
      continue;
    }
    const folder = folderOf(w.file);
    if (folder === o.owner || (o.alsoWrittenBy && folder in o.alsoWrittenBy)) continue;
    out.push(
      `${where}: ${w.verb} ${w.table} from ${folder}/, but ${w.table} is owned by ${o.owner}/ (apps/server/src/db/owners.ts); call ${o.owner}/'s store instead`,
    );
  }
  for (const m of c.mentions) {
    const o = owners[m.table];
    if (!o?.strict || folderOf(m.file) === o.owner) continue;
    out.push(
      `apps/server/src/${m.file}:${m.line}: queries ${m.table} from ${folderOf(m.file)}/, but every query on ${m.table} is in ${o.owner}/ (strict in db/owners.ts)`,
    );
  }
  return [...new Set(out)];
}

describe('the SQL write extractor', () => {
  it('finds the table of each write form, and nothing in reads', () => {
    const w = (sql: string) => sqlWrites(sql).map((x) => `${x.verb} ${x.table}`);
    expect(w(`INSERT INTO alerts (id) VALUES ($1)`)).toEqual(['INSERT alerts']);
    expect(w(`insert into public."Webhooks" (a) select 1`)).toEqual(['INSERT webhooks']);
    expect(w(`UPDATE regressions SET hints = $2 WHERE id = $1`)).toEqual(['UPDATE regressions']);
    expect(w(`UPDATE webhook_deliveries d SET status = 'x' FROM webhooks w`)).toEqual([
      'UPDATE webhook_deliveries',
    ]);
    expect(w(`UPDATE ONLY slos AS s SET name = $1`)).toEqual(['UPDATE slos']);
    expect(w(`DELETE FROM histograms h USING keys k WHERE h.id = k.id`)).toEqual([
      'DELETE histograms',
    ]);
    expect(w(`COPY span_durations (a, b) FROM STDIN (FORMAT binary)`)).toEqual([
      'COPY span_durations',
    ]);
    expect(w(`TRUNCATE TABLE ONLY a, b`)).toEqual(['TRUNCATE a', 'TRUNCATE b']);
    expect(w(`MERGE INTO deploys d USING x ON true WHEN MATCHED THEN DELETE`)).toEqual([
      'MERGE deploys',
    ]);
    expect(w(`ALTER TABLE IF EXISTS series ADD COLUMN x int`)).toEqual(['ALTER series']);
    expect(w(`DROP TABLE IF EXISTS observations_p20261202`)).toEqual([
      'DROP observations_p20261202',
    ]);
    expect(
      w(`CREATE TABLE IF NOT EXISTS x_p1 PARTITION OF histograms FOR VALUES FROM (1) TO (2)`),
    ).toEqual(['PARTITION OF histograms']);
    // Reads, upserts' DO UPDATE, row locks, COPY ... TO and comments write nothing.
    expect(
      w(`WITH c AS (SELECT * FROM alerts FOR UPDATE SKIP LOCKED)
         INSERT INTO alert_events (a) SELECT a FROM c
         ON CONFLICT (a) DO UPDATE SET a = EXCLUDED.a`),
    ).toEqual(['INSERT alert_events']);
    expect(w(`SELECT 1 FROM regressions FOR NO KEY UPDATE`)).toEqual([]);
    expect(w(`COPY (SELECT * FROM histograms) TO STDOUT`)).toEqual([]);
    expect(w(`COPY histograms TO STDOUT`)).toEqual([]);
    expect(w(`SELECT 1 -- UPDATE alerts SET x = 1\n FROM series`)).toEqual([]);
    expect(w(`failed to update the regression`)).toEqual([]);
  });

  it('reads strings from TypeScript: templates, dynamic names, partitionName, COPY helpers', () => {
    const found = sourceStrings(
      'x.ts',
      [
        'const a = await db.query(`UPDATE alerts SET notified = true WHERE id = ${id}`);',
        "await c.query('DELETE FROM silences WHERE id = $1', [id]);",
        'await c.query(`DELETE FROM ${table} WHERE x`);',
        "await copyInto(client, `${partitionName('observations', day)} (${COLUMNS})`, chunks);",
        "await copyIn(client, 'span_durations (a, b)', data);",
      ].join('\n'),
    ).flatMap((s) => sqlWrites(s.sql).map((w) => `${s.line} ${w.verb} ${w.table}`));
    expect(found).toEqual([
      '1 UPDATE alerts',
      '2 DELETE silences',
      `3 DELETE ${DYNAMIC}`,
      '4 COPY observations',
      '5 COPY span_durations',
    ]);
    expect(tempTables('CREATE TEMP TABLE IF NOT EXISTS ingest_stage (a int)')).toEqual([
      'ingest_stage',
    ]);
    expect(sqlMentions('SELECT 1 FROM webhook_deliveries d JOIN alerts a ON true')).toEqual([
      'webhook_deliveries',
      'alerts',
    ]);
  });
});

describe('one writer per table', () => {
  it('the owner map lists every table the migrations create, each owner a folder in src', () => {
    expect(Object.keys(TABLE_OWNERS).sort()).toEqual(migrationTables());
    const folders = new Set(
      readdirSync(src).filter((n) => statSync(path.join(src, n)).isDirectory()),
    );
    for (const [table, o] of Object.entries(owners)) {
      expect(folders.has(o.owner), `${table}: owner ${o.owner}/`).toBe(true);
      for (const f of Object.keys(o.alsoWrittenBy ?? {}))
        expect(folders.has(f), `${table}: also written by ${f}/`).toBe(true);
    }
  });

  it('finds writes for every table (an extractor that matches nothing fails here)', () => {
    const c = collect();
    const written = new Set(c.writes.map((w) => w.table));
    // 31 tables today; each is written somewhere in src.
    expect(written.size).toBeGreaterThanOrEqual(30);
    expect(Object.keys(owners).filter((t) => !written.has(t))).toEqual([]);
    expect(c.writes.length).toBeGreaterThan(100);
  });

  it('every table is written only from its owning folder (or a named second writer)', () => {
    expect(violations(collect())).toEqual([]);
  });

  it('DYNAMIC_WRITES lists only files that name a table through a variable', () => {
    const c = collect();
    expect(Object.keys(DYNAMIC_WRITES).filter((f) => !c.dynamicIn.has(f))).toEqual([]);
  });

  it('a write from the wrong folder fails, naming file, table and owner', () => {
    const c = collect({
      'webhooks/oops.ts':
        'await db.query(`UPDATE alerts SET notified = true WHERE id = $1`, [id]);',
    });
    expect(violations(c)).toEqual([
      "apps/server/src/webhooks/oops.ts:1: UPDATE alerts from webhooks/, but alerts is owned by alerts/ (apps/server/src/db/owners.ts); call alerts/'s store instead",
      'apps/server/src/webhooks/oops.ts:1: queries alerts from webhooks/, but every query on alerts is in alerts/ (strict in db/owners.ts)',
    ]);
  });
});

describe('docs/where-things-live.md quotes the owner map', () => {
  const doc = readFileSync(path.join(root, 'docs/where-things-live.md'), 'utf8');

  it('its table owners section is the map, row for row', () => {
    const rows = Object.entries(owners).map(([t, o]) => {
      const also = Object.entries(o.alsoWrittenBy ?? {})
        .map(([f, why]) => `\`${f}/\`: ${why}`)
        .join('; ');
      return `| \`${t}\` | \`${o.owner}/\`${o.strict ? ' (every query)' : ''} | ${also || '–'} |`;
    });
    const quoted = doc
      .split('\n')
      .map((l) => l.replace(/\s+\|/g, ' |').replace(/\|\s+/g, '| ').trim())
      .filter((l) => /^\| `[a-z_]+` \| `[a-z]+\/`/.test(l));
    expect(quoted).toEqual(rows);
  });

  it('its folder table has a row for every folder under apps/server/src', () => {
    const folders = readdirSync(src).filter((n) => statSync(path.join(src, n)).isDirectory());
    const missing = folders.filter((f) => !new RegExp(`^\\|[^|\\n]*\`${f}/\``, 'm').test(doc));
    expect(missing).toEqual([]);
  });
});

import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { createCitusTestDatabase } from './citus-cluster.ts';

/** A fresh, empty database on the run's embedded PostgreSQL; returns its URL. */
export async function createTestDatabase(prefix = 'onset_test'): Promise<string> {
  // The `citus` test project (vitest.config.ts): the same suites on a Citus cluster.
  if (process.env.ONSET_TEST_DATABASE === 'citus') return createCitusTestDatabase(prefix);
  const base = process.env.ONSET_TEST_PG_URL;
  if (!base)
    throw new Error(
      'ONSET_TEST_PG_URL is not set: run tests through vitest (globalSetup starts PostgreSQL)',
    );
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client(base);
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

#!/usr/bin/env node
// The CLI is TypeScript run through tsx (the monorepo has no build step).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2), {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n'),
  env: process.env,
});

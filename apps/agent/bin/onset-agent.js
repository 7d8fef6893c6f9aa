#!/usr/bin/env node
// `onset-agent`: the agent is TypeScript run through tsx (no build step), so
// this launcher registers tsx's loader in this process and imports main.ts.
// Keeping one process (instead of spawning `node --import tsx`) means signals
// reach the agent directly and its clean shutdown still flushes spans.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');

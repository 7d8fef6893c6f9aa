/**
 * Live, case d (incident 4): two services on loopback instrumented with the
 * OpenTelemetry JS SDK; the callee switches to writing the header and the
 * body separately with Nagle's algorithm on, so its caller waits for the
 * delayed ACK (+40 ms) while the callee's own spans stay flat. A deploy
 * marker for the callee is posted at the change. Onset must open one
 * regression on the caller's side of the edge (client or gap view), none on
 * the callee's server view, with the marker as its top suspect, within 5 test
 * minutes of the change.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  changeMidRun,
  describeResult,
  liveSkipReason,
  startLiveRun,
  startWorkload,
  WORKLOADS,
  type LiveRun,
  type Workload,
} from './helpers/harness.ts';

const BASELINE_MINUTES = 60;
const WAIT_MINUTES = 12;
const AFTER_MINUTES = 3;

const skip = liveSkipReason();
if (skip) console.warn(`live Nagle test skipped: ${skip}`);

let run: LiveRun | undefined;
const workloads: Workload[] = [];
afterAll(async () => {
  for (const w of workloads) await w.stop();
  await run?.close();
});

const pair = (role: string, ...args: string[]) => {
  const w = startWorkload(process.execPath, [
    '--import',
    'tsx',
    path.join(WORKLOADS, 'http-pair.ts'),
    role,
    run!.relay.url,
    ...args,
  ]);
  workloads.push(w);
  return w;
};

describe.skipIf(skip !== null)(
  'live: a callee starts writing header and body apart, Nagle on',
  () => {
    it('opens one regression on the caller’s view of the edge, marker first, within 5 test minutes', async () => {
      run = await startLiveRun({
        agent: null,
        maxMinutes: BASELINE_MINUTES + WAIT_MINUTES + AFTER_MINUTES + 10,
      });
      const callee = pair('callee');
      const port = await callee.line('port');
      const caller = pair('caller', port, '5');
      await caller.line('ready');
      const stats = (w: Workload) =>
        w.lines
          .filter((l) => l.startsWith('stat '))
          .slice(-30)
          .join('; ');

      const res = await changeMidRun(run, {
        workload: callee,
        switchCommand: 'nagle',
        baselineMinutes: BASELINE_MINUTES,
        waitMinutes: WAIT_MINUTES,
        afterMinutes: AFTER_MINUTES,
        marker: {
          service: 'live-callee',
          kind: 'dependency',
          component: 'hyper',
          from_version: '0.12.35',
          to_version: '0.13.1',
        },
        describe: async () =>
          `series: ${await run!.describeSeries({})}\ncaller: ${stats(caller)}\ncallee: ${stats(callee)}`,
      });
      console.log(
        `live Nagle:\n${describeResult(res)}\ncaller: ${stats(caller)}\ncallee: ${stats(callee)}`,
      );

      const labels = res.regressions.map(
        (r) => `${r.service} ${r.op}/${r.view} ${r.name} -> ${r.peer}`,
      );
      expect(labels).toHaveLength(1);
      const r = res.regressions[0]!;
      const d = res.detections[0]!;
      expect(r).toMatchObject({
        service: 'live-caller',
        op: 'request',
        name: 'GET /lookup',
        peer: 'live-callee',
      });
      expect(['client', 'gap']).toContain(r.view);
      expect(r.suspects[0]?.deploy_id).toBe(res.markerId);
      expect(Math.abs(d.onsetMinutes)).toBeLessThanOrEqual(2);
      expect(d.minutes).toBeLessThanOrEqual(5);
    }, 300_000);
  },
);

import { detectSteps } from '@onset/core';
import { generateShapes } from './bench/eval-detect/shapes.ts';
const shapes = generateShapes({ perKind: 60, seed: 1 }).filter((s) => s.kind === 'tail-floor');
for (const s of shapes.slice(0, 6)) {
  const c = s.change!;
  const ch = detectSteps(s.points, { minRatio: 1.2 });
  const b = s.points.slice(c.index - 40, c.index).map((p) => Math.round(p.p99)).join(',');
  const a = s.points.slice(c.index, c.index + 40).map((p) => Math.round(p.p99)).join(',');
  const a50 = s.points.slice(c.index-5, c.index + 10).map((p) => p.p50.toFixed(1)).join(',');
  console.log(s.id, 'count', s.points[c.index]!.count, '\n B', b, '\n A', a, '\n p50', a50, '\n', ch.map((d) => `${d.index}/${d.detectedIndex}:${d.metric}:${d.direction}:${d.ratio.toFixed(2)}`).join(' '));
}

/**
 * Seeded random numbers for reproducible test and benchmark data: one
 * mulberry32 for every generator (incidents, detector property tests,
 * benchmarks), so the same seed draws the same picture everywhere.
 * No server import: pure code, safe for packages/core tests.
 */

/** mulberry32 returning the raw 32-bit state mix as an unsigned integer. */
function mulberry32Bits(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  const bits = mulberry32Bits(seed);
  return () => bits() / 4294967296;
}

/** Uniform in (0, 1): never 0, so log() of a draw is finite (Box-Muller, Poisson). */
export function mulberry32Open(seed: number): () => number {
  const bits = mulberry32Bits(seed);
  return () => (bits() + 0.5) / 4294967296;
}

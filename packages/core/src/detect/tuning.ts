/**
 * The detector's fixed tuning: every number the method depends on that is
 * not a user option (those are DetectOptions, types.ts). Each was measured
 * on the evaluation corpus (docs/detection.md); change one only with
 * `npm run eval:detect` before and after.
 */

/** Rounded to 1e-6 (far below the histograms' 1% resolution), so the state's JSON stays short. */
export const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

// ---- online model -----------------------------------------------------

/** Memory (points) of the spread estimate used by the small-count correction. */
export const SPREAD_MEMORY = 512;
/** Baseline smoothing (Holt): level gain and slope gain. */
export const HOLT_LEVEL_GAIN = 0.1;
export const HOLT_SLOPE_GAIN = 0.02;
/** The baseline learns from points this far back (so a step's first points cannot pull it along). */
export const BASELINE_LAG = 16;
/** A CUSUM run above this share of its threshold keeps its points out of the baseline (a suspected step). */
export const SUSPECT_RUN_SHARE = 0.75;
/** Largest believable drift of the baseline, log units per minute (~×1.35 per hour). */
export const MAX_SLOPE = 0.005;
/** E[min(Z², 16)] for standard normal Z, and the memory (points) of the residual calibration. */
export const WINSOR_4SD = 0.9987;
export const CALIBRATION_MEMORY = 256;
/** Time scale of the calibration: sums decay by SPAN_DECAY per point (~16 points); SPAN_NORM turns their variance into a per-point one. */
export const SPAN_DECAY = 1 - 1 / 32;
export const SPAN_NORM = 1 - SPAN_DECAY * SPAN_DECAY;
/** E[min(Z², 4)] for standard normal Z. */
export const WINSOR_2SD = 0.9211;
/** Noise model memory (points). */
export const NOISE_MEMORY = 128;
/** Tail share: upper quantile of the regime, its window and refresh period (points). */
export const TAIL_QUANTILE = 0.95;
export const TAIL_WINDOW = 64;
export const TAIL_REFRESH = 32;
/** Threshold of the tail-share CUSUMs. */
export const TAIL_CUSUM_H = 6;
/** The slow level CUSUM: clip and threshold (its reference is cusumK / 2). */
export const SLOW_CUSUM_CLIP = 2;
export const SLOW_CUSUM_H = 12;
/** Finite sentinels keep the state plain JSON (JSON has no Infinity). */
export const NO_THRESHOLD = Number.MAX_VALUE;
export const NEVER = -1e9;

// ---- confirmation -----------------------------------------------------

/** Fewest points on each side of a split that a confirmation accepts. */
export const MIN_BEFORE = 8;
export const MIN_AFTER = 3;
/**
 * A series' first SHORT_HISTORY points: a step there is confirmed at
 * SHORT_ALPHA (a rank test over so few points cannot reach alpha).
 */
export const SHORT_HISTORY = 24;
export const SHORT_ALPHA = 1e-3;
/** ... and only for a clear step: medians either side this many noise sds apart. */
export const SHORT_CLEAR_SD = 3;
/** Significance for a second quantile to join a change confirmed on the first. */
export const JOIN_ALPHA = 1e-3;
/**
 * An alarm whose run began at least this many points ago also tests the
 * best split inside the run: a CUSUM run that wandered up for a while
 * before a large step dates the step too early (was 12, which cost a large
 * step after such a run 8 points of waiting for the retest).
 */
export const INNER_SPLIT_AFTER = 6;
/** ... and when that split's test is already below this p-value, it is retested on the schedule of its own points. */
export const FAST_RETEST_P = 1e-3;
/** An unconfirmed alarm is retested after waited/RETEST_GROWTH more points (a geometric schedule). */
export const RETEST_GROWTH = 2;
/** An alarm whose test is below this p-value is not written off before maxAfterPoints. */
export const PROMISING_P = 1e-2;
/**
 * The exceedance tests count points above these upper shares of the
 * history: 15% both ways; then, for regressions, the top 2% (new extremes)
 * and, for improvements, the top 30% (a slow tail that showed in up to a
 * third of the minutes and is gone: the after points stop reaching it).
 */
export const EXCEEDANCE_SHARE = 0.15;
export const TOP_SHARE = 0.02;
export const VANISHED_SHARE = 0.3;
/**
 * Unshifted rank test (see unshiftedTest()): Bonferroni penalty, fewest
 * after points, noise gate (sd of a point, log units), and the margin test
 * p-value under which it is tried.
 */
export const UNSHIFTED_PENALTY = 10;
export const UNSHIFTED_MIN_AFTER = 8;
export const UNSHIFTED_MIN_SD = 0.25;
export const UNSHIFTED_GATE_P = 0.05;
/** ... or, below that noise, where the history's thirds have medians within this share of the step. */
export const STEADY_SHARE = 0.15;
export const STEADY_MAX_AFTER = 24;

/**
 * A step confirmed when it is already over (see report.ts isOver()): at most
 * this many points long, its last TRANSIENT_TAIL points back, and its levels
 * at least TRANSIENT_CLEAR_SD noise sds apart.
 */
export const TRANSIENT_MAX_POINTS = 15;
export const TRANSIENT_TAIL = 2;
export const TRANSIENT_CLEAR_SD = 4;

/**
 * Jumps (see jump.ts): a point a factor JUMP_RATIO beyond the forecast and
 * at least JUMP_SD calibrated noise sds beyond it; JUMP_POINTS of them in a row raise
 * an alarm dated at the first, tested at every point until it is
 * JUMP_FRESH points old; runs are looked for up to JUMP_LOOKBACK points back.
 */
export const JUMP_SD = 6;
export const JUMP_RATIO = 2;
export const JUMP_POINTS = 2;
export const JUMP_FRESH = 6;
export const JUMP_LOOKBACK = 12;
/** ... or JUMP_MARGIN (log units, ×1.5) beyond every point of the last JUMP_HISTORY before the run. */
export const JUMP_HISTORY = 60;
export const JUMP_MARGIN = Math.log(1.5);
/**
 * A step confirmed on 3 points (largeStepP): its median at least LARGE_RATIO
 * beyond the history's, its 3 points within LARGE_SPREAD of the step (log units).
 */
export const LARGE_RATIO = 2.2;
export const LARGE_SPREAD = 0.5;

// ---- localisation -----------------------------------------------------

/** Onset interval: splits whose log-likelihood ratio is within this of the best (≈95%). */
export const ONSET_LR_DROP = 4;

// ---- new extremes -----------------------------------------------------

/**
 * New extremes (see extremes.ts): block size and number of blocks of the
 * long history, window (points) of an episode, fewest exceedances for a
 * test, fewest history points, noise gate (sd of a point, log units) and
 * margin (log units) above the history's second largest value.
 */
export const EXTREMES_BLOCK_POINTS = 32;
export const EXTREMES_BLOCKS = 22;
export const EXTREMES_EPISODE_POINTS = 120;
export const EXTREMES_MIN_EXCEEDANCES = 3;
export const EXTREMES_MIN_HISTORY = 192;
export const EXTREMES_MIN_SD = 0.3;
export const EXTREMES_MARGIN = 1.4;

// ---- long scan ----------------------------------------------------------

/**
 * Long scan (see long-scan.ts): points of history before and after a split
 * (most, fewest), fewest before, how often it runs (points), and the
 * Bonferroni factor for choosing the split (among up to ~500) and for
 * repeating the scan.
 */
export const LONG_BEFORE = 480;
export const LONG_MAX_AFTER = 180;
export const LONG_MIN_AFTER = 64;
export const LONG_MIN_BEFORE = 120;
export const LONG_EVERY = 32;
export const LONG_PENALTY = 200;
/** Points of the ring kept before the scan's earliest split (localise() looks 30 back). */
export const LONG_RING_MARGIN = 40;
/** z a split must reach before the scan spends rank tests on it. */
export const LONG_SCREEN = 4;
/**
 * Slow wander (see wander()): block size (points), blocks of differences
 * kept, fewest lag-8 differences for a verdict, and the largest ratio of the
 * lower third of |lag-8 differences| to the median |lag-1 difference| of
 * block medians that still counts as calm (for stationary noise it is
 * ~0.64; a daily cycle drives it to 1-40).
 */
export const WANDER_BLOCK = 32;
export const WANDER_KEEP = 24;
export const WANDER_MIN = 16;
export const WANDER_RATIO = 0.8;

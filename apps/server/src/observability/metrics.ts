/**
 * Process-wide Prometheus metrics that any module may update, served at
 * /metrics together with the per-server gauges of plugin.ts.
 *
 * Other features import the named metric they feed, e.g.
 *
 *   import { detectionPassSeconds, webhookDeliveries } from './metrics.ts';
 *   const end = detectionPassSeconds.startTimer();  ...  end({ result: 'ok' });
 *   webhookDeliveries.inc({ format: 'slack', result: 'success' });
 *
 * Label values must come from small fixed sets (never ids, URLs or names).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const metricsRegistry = new Registry();
// process_* and nodejs_* (CPU, memory, event-loop lag, GC) under their standard names.
collectDefaultMetrics({ register: metricsRegistry });

/** Seconds buckets from 1 ms to ~17 min: passes and jobs range from trivial to backfills. */
const SECONDS_BUCKETS = [
  0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 1000,
];

/** One change-point detection pass over the data (scheduled or POST /api/v1/detect). result: ok | error. */
export const detectionPassSeconds = new Histogram({
  name: 'onset_detection_pass_duration_seconds',
  help: 'Duration of change-point detection passes',
  labelNames: ['result'] as const,
  buckets: SECONDS_BUCKETS,
  registers: [metricsRegistry],
});

/**
 * Ingest transactions whose histograms and durations were folded with later ones
 * (otlp/fold-journal.ts), by how their marks (or older servers' journal rows) were applied.
 * how: folded (by this server's fold) | recovered (marks of a writer that died, or its own
 * that no fold took, applied by this server's recovery). Named when the journal held
 * histograms only.
 */
export const histogramJournalRows = new Counter({
  name: 'onset_histogram_journal_rows_total',
  help: 'Ingest transactions whose histograms and durations went through the journal, by how they were applied',
  labelNames: ['how'] as const,
  registers: [metricsRegistry],
});

/** Series examined by detection passes (a pass adds how many it looked at). */
export const detectionSeriesScanned = new Counter({
  name: 'onset_detection_series_scanned_total',
  help: 'Series examined by detection passes',
  registers: [metricsRegistry],
});

/**
 * Series whose detection this server runs: those of the shards it leases
 * (detection/shards.ts). Across the servers of one cluster they sum to the
 * series count; 0 on a server without the scheduler.
 */
export const detectionSeriesOwned = new Gauge({
  name: 'onset_detection_series_owned',
  help: 'Series whose detection this server runs (in the detection shards it leases)',
  registers: [metricsRegistry],
});

/** Detection shards this server leases (detection/shards.ts). */
export const detectionShardsOwned = new Gauge({
  name: 'onset_detection_shards_owned',
  help: 'Detection shards this server leases',
  registers: [metricsRegistry],
});

/** (Series, resource) pairs with a cluster-wide exemplar keep rate on this server (otlp/exemplar-rates.ts). */
export const exemplarRatePairs = new Gauge({
  name: 'onset_exemplar_rate_pairs',
  help: 'Series/resource pairs whose exemplars this server samples at the cluster-wide keep rate',
  registers: [metricsRegistry],
});

/** Regressions opened by detection. */
export const regressionsDetected = new Counter({
  name: 'onset_regressions_detected_total',
  help: 'Regressions opened by detection passes',
  labelNames: ['op', 'view'] as const,
  registers: [metricsRegistry],
});

export const regressionsHeld = new Counter({
  name: 'onset_regressions_held_total',
  help: "Steps not opened as regressions (reason host_cpu_steal: the hypervisor took the hosts' CPU at the onset)",
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

/**
 * Alert webhook delivery attempts. format: json | slack | pagerduty | alertmanager | alertmanager-webhook;
 * result: success (2xx) | http_error (non-2xx) | network_error | timeout.
 */
export const webhookDeliveries = new Counter({
  name: 'onset_webhook_deliveries_total',
  help: 'Alert webhook delivery attempts by receiver format and result',
  labelNames: ['format', 'result'] as const,
  registers: [metricsRegistry],
});

/** Time to deliver one webhook (one attempt, including the receiver's answer). */
export const webhookDeliverySeconds = new Histogram({
  name: 'onset_webhook_delivery_duration_seconds',
  help: 'Duration of one webhook delivery attempt',
  labelNames: ['format'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});

/** SLO evaluation passes (burn rates for every SLO). */
export const sloEvaluationSeconds = new Histogram({
  name: 'onset_slo_evaluation_duration_seconds',
  help: 'Duration of SLO burn-rate evaluation passes',
  labelNames: ['result'] as const,
  buckets: SECONDS_BUCKETS,
  registers: [metricsRegistry],
});

/** Background jobs (graphile-worker) by task and outcome; fed by observeJobs(). */
export const jobRuns = new Counter({
  name: 'onset_jobs_total',
  help: 'Background jobs run, by task and result (success | error)',
  labelNames: ['task', 'result'] as const,
  registers: [metricsRegistry],
});

export const jobSeconds = new Histogram({
  name: 'onset_job_duration_seconds',
  help: 'Duration of background jobs by task',
  labelNames: ['task'] as const,
  buckets: SECONDS_BUCKETS,
  registers: [metricsRegistry],
});

/** Annotations pushed to Grafana's HTTP API (GRAFANA_URL), by kind and result. */
export const grafanaAnnotations = new Counter({
  name: 'onset_grafana_annotations_total',
  help: 'Annotations posted to Grafana, by kind (deploy | regression) and result',
  labelNames: ['kind', 'result'] as const,
  registers: [metricsRegistry],
});

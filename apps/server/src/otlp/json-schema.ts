import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

/**
 * The part of the OTLP/JSON mapping Onset reads. Unknown fields are allowed
 * (and ignored) as OTLP requires; known fields must have the right types.
 */
const Int64 = Type.Union([Type.String({ pattern: '^-?[0-9]+$' }), Type.Integer()]);
/**
 * Only the top level of a value is checked here: nested array and kvlist
 * members are read defensively by values.ts (the compiled checker recurses,
 * and a value nested 1,000 deep would overflow its stack).
 */
const AnyValue = Type.Object({
  stringValue: Type.Optional(Type.String()),
  boolValue: Type.Optional(Type.Boolean()),
  intValue: Type.Optional(Int64),
  doubleValue: Type.Optional(Type.Union([Type.Number(), Type.String()])),
  bytesValue: Type.Optional(Type.String()),
  arrayValue: Type.Optional(Type.Object({ values: Type.Optional(Type.Array(Type.Unknown())) })),
  kvlistValue: Type.Optional(Type.Object({ values: Type.Optional(Type.Array(Type.Unknown())) })),
});
const KeyValues = Type.Array(Type.Object({ key: Type.String(), value: Type.Optional(AnyValue) }));
const Resource = Type.Object({ attributes: Type.Optional(KeyValues) });
const Id = Type.String();

const Span = Type.Object({
  traceId: Id,
  spanId: Id,
  parentSpanId: Type.Optional(Type.String()),
  name: Type.String(),
  // Range checked per span (normalize-traces.ts): one span of kind 40000 is refused alone.
  kind: Type.Optional(Type.Union([Type.Integer(), Type.String()])),
  startTimeUnixNano: Int64,
  endTimeUnixNano: Int64,
  attributes: Type.Optional(KeyValues),
});

const TracesJson = Type.Object({
  resourceSpans: Type.Optional(
    Type.Array(
      Type.Object({
        resource: Type.Optional(Resource),
        scopeSpans: Type.Optional(
          Type.Array(Type.Object({ spans: Type.Optional(Type.Array(Span)) })),
        ),
      }),
    ),
  ),
});

const Double = Type.Union([Type.Number(), Type.String()]);
const HistogramPoint = Type.Object({
  attributes: Type.Optional(KeyValues),
  startTimeUnixNano: Type.Optional(Int64),
  timeUnixNano: Int64,
  count: Type.Optional(Int64),
  sum: Type.Optional(Double),
  min: Type.Optional(Double),
  max: Type.Optional(Double),
  bucketCounts: Type.Optional(Type.Array(Int64)),
  explicitBounds: Type.Optional(Type.Array(Double)),
});
const ExpBuckets = Type.Object({
  offset: Type.Optional(Type.Integer()),
  bucketCounts: Type.Optional(Type.Array(Int64)),
});
const ExpPoint = Type.Object({
  attributes: Type.Optional(KeyValues),
  startTimeUnixNano: Type.Optional(Int64),
  timeUnixNano: Int64,
  count: Type.Optional(Int64),
  sum: Type.Optional(Double),
  min: Type.Optional(Double),
  max: Type.Optional(Double),
  scale: Type.Optional(Type.Integer()),
  zeroCount: Type.Optional(Int64),
  positive: Type.Optional(ExpBuckets),
  negative: Type.Optional(ExpBuckets),
});
const Temporality = Type.Optional(Type.Union([Type.Integer(), Type.String()]));
const MetricsJson = Type.Object({
  resourceMetrics: Type.Optional(
    Type.Array(
      Type.Object({
        resource: Type.Optional(Resource),
        scopeMetrics: Type.Optional(
          Type.Array(
            Type.Object({
              metrics: Type.Optional(
                Type.Array(
                  Type.Object({
                    name: Type.String(),
                    unit: Type.Optional(Type.String()),
                    histogram: Type.Optional(
                      Type.Object({
                        dataPoints: Type.Optional(Type.Array(HistogramPoint)),
                        aggregationTemporality: Temporality,
                      }),
                    ),
                    exponentialHistogram: Type.Optional(
                      Type.Object({
                        dataPoints: Type.Optional(Type.Array(ExpPoint)),
                        aggregationTemporality: Temporality,
                      }),
                    ),
                  }),
                ),
              ),
            }),
          ),
        ),
      }),
    ),
  ),
});

/** Logs are only counted (Onset stores none): the records' own fields are not read. */
const LogsJson = Type.Object({
  resourceLogs: Type.Optional(
    Type.Array(
      Type.Object({
        scopeLogs: Type.Optional(
          Type.Array(Type.Object({ logRecords: Type.Optional(Type.Array(Type.Unknown())) })),
        ),
      }),
    ),
  ),
});

export const checkTracesJson = TypeCompiler.Compile(TracesJson);
export const checkMetricsJson = TypeCompiler.Compile(MetricsJson);
export const checkLogsJson = TypeCompiler.Compile(LogsJson);

/** First schema error as "path: message", for a 400 a human can act on. */
export type JsonChecker = {
  Errors(value: unknown): { First(): { path: string; message: string } | undefined };
};

export function firstError(checker: JsonChecker, value: unknown): string | null {
  const e = checker.Errors(value).First();
  return e ? `${e.path || '/'}: ${e.message}` : null;
}

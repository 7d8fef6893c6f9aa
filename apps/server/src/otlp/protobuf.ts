import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor/index.js';

/**
 * Protobuf codecs for OTLP, built by protobufjs from the official
 * opentelemetry-proto definitions: `otlp.binpb` is their FileDescriptorSet,
 * written by tools/otlp-descriptors from the Go module
 * go.opentelemetry.io/proto/otlp (see that tool to regenerate). Field names
 * take their JSON (lowerCamelCase) names, as in the OTLP JSON mapping, so
 * decoded protobuf and parsed JSON have the same shape.
 */
interface FieldDescriptor {
  name: string;
  jsonName?: string;
}
interface MessageDescriptor {
  field?: FieldDescriptor[];
  nestedType?: MessageDescriptor[];
}

function useJsonNames(m: MessageDescriptor): void {
  for (const f of m.field ?? []) f.name = f.jsonName || protobuf.util.camelCase(f.name);
  for (const n of m.nestedType ?? []) useJsonNames(n);
}

/**
 * An absent singular field reads as null, as in the codecs the server was
 * written against (pbjs static code with null defaults): the normalisers tell
 * "not sent" from 0 (`min`, `max`, `sum`, `parentSpanId`, oneof members).
 */
function nullDefaults(ns: protobuf.NamespaceBase): void {
  for (const child of ns.nestedArray) {
    if (child instanceof protobuf.Type) {
      const proto = child.ctor.prototype as Record<string, unknown>;
      for (const f of child.fieldsArray) if (!f.repeated && !f.map) proto[f.name] = null;
    }
    if (child instanceof protobuf.Namespace) nullDefaults(child);
  }
}

const set = (descriptor as any).FileDescriptorSet.decode(
  readFileSync(new URL('./otlp.binpb', import.meta.url)),
) as {
  file: Array<{ messageType?: MessageDescriptor[] }>;
};
for (const file of set.file) for (const m of file.messageType ?? []) useJsonNames(m);
const root = (protobuf.Root as any).fromDescriptor(set) as protobuf.Root;
root.resolveAll();
nullDefaults(root);

interface Codec {
  decode(buf: Uint8Array): unknown;
  encode(msg: unknown): { finish(): Uint8Array };
  fromObject(obj: unknown): unknown;
}

const codec = (name: string) => root.lookupType(name) as unknown as Codec;

export const TraceRequest: Codec = codec(
  'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest',
);
export const TraceResponse: Codec = codec(
  'opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse',
);
export const MetricsRequest: Codec = codec(
  'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest',
);
export const MetricsResponse: Codec = codec(
  'opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse',
);
export const LogsRequest: Codec = codec(
  'opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest',
);
export const LogsResponse: Codec = codec(
  'opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse',
);

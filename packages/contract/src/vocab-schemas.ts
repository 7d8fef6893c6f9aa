import { Type, type TLiteral, type TUnion } from '@sinclair/typebox';
import { OPS, SEVERITIES, VIEWS, WEBHOOK_FORMATS, DELIVERY_STATUSES } from './vocab.ts';

/** A vocabulary as a JSON-schema union of string literals. */
export function literalUnion<const T extends readonly string[]>(
  values: T,
): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(values.map((v) => Type.Literal(v)));
}

export const OpSchema = literalUnion(OPS);
export const ViewSchema = literalUnion(VIEWS);
export const SeveritySchema = literalUnion(SEVERITIES);
export const WebhookFormatSchema = literalUnion(WEBHOOK_FORMATS);
export const DeliveryStatusSchema = literalUnion(DELIVERY_STATUSES);

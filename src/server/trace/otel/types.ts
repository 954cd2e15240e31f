/** OTLP trace data, decoded from protobuf or JSON into one shape. Ids are lower-case hex. */

export type AttributeValue = string | boolean | number | AttributeValue[] | { [key: string]: AttributeValue } | null;

export type KeyValues = [string, AttributeValue][];

export interface OtlpEvent {
  timeUnixNano: bigint;
  name: string;
  attributes: KeyValues;
  droppedAttributesCount: number;
}

export interface OtlpLink {
  traceId: string;
  spanId: string;
  traceState: string;
  attributes: KeyValues;
  droppedAttributesCount: number;
  flags: number;
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  traceState: string;
  parentSpanId: string;
  flags: number;
  name: string;
  kind: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: KeyValues;
  droppedAttributesCount: number;
  events: OtlpEvent[];
  droppedEventsCount: number;
  links: OtlpLink[];
  droppedLinksCount: number;
  status: { code: number; message: string };
}

export interface OtlpResourceSpans {
  resource: { attributes: KeyValues; droppedAttributesCount: number };
  spans: OtlpSpan[];
}

/** A body that is not valid OTLP; answered with 400. */
export class OtlpFormatError extends Error {}

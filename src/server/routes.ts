import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { ApiError, type ErrorStyle } from "./errors.js";
import { parseInput, RequestValidationError, type ValidationIssue } from "./validation.js";

type HttpMethod = "GET" | "POST" | "PUT" | "DELETE" | "PATCH";

/** A route and the schemas that both validate its input and document it in /openapi.json. */
export interface RouteSpec<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType> {
  method: HttpMethod;
  url: string;
  summary: string;
  tags?: string[];
  body?: B;
  query?: Q;
  params?: P;
  /**
   * The JSON body of a successful answer: documented in /openapi.json, and checked against every
   * answer when the app is built with `checkResponses` (the tests).
   */
  response?: z.ZodType;
  /**
   * The schema of each item of a streamed answer: each server-sent event's `data` (the chat
   * surface's `stream: true`), or each line of JSON Lines (`streamFormat: "jsonl"`, checked like
   * `response`).
   */
  stream?: z.ZodType;
  /** How `stream` items travel: server-sent events (the default) or JSON Lines. */
  streamFormat?: "sse" | "jsonl";
  /** A successful answer that is not JSON (bytes, text, an archive, or nothing): its media type and what it holds. */
  rawResponse?: RawResponse;
  errorStyle?: ErrorStyle;
  /** Security scheme named in the documentation; undefined for public routes. */
  security?: "bearer" | "basic";
  /** Cheap checks on the raw body before the schema runs (size limits), throwing the route's errors. */
  precheck?: (body: unknown) => void;
  /**
   * Cheaper checks on the JSON text as it is uploaded, before it is even parsed (counts of array
   * elements), throwing the route's errors: parsing a body of a few megabytes can hold the event
   * loop for long. A fresh scan per request (`installJsonBodyParser` feeds it).
   */
  prescan?: () => BodyScan;
  /** Largest body this route reads, in bytes (default: the server's); larger ones are a 413 before any is read. */
  bodyLimit?: number;
}

/** A non-JSON answer, as /openapi.json shows it; `mediaType: null` for an answer with no body. */
export interface RawResponse {
  mediaType: string | null;
  description: string;
}

export interface RouteInput<B, Q, P> {
  body: B;
  query: Q;
  params: P;
}

type Handler<B, Q, P> = (input: RouteInput<B, Q, P>, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * Every route defined through `defineRoute`, in definition order, for the OpenAPI document. With
 * `checkResponses` (the tests turn it on) every successful JSON answer, and every line of a JSON
 * Lines stream, is parsed with its route's schema, and one that does not match is a 500 naming
 * the differences, so the schemas /openapi.json shows are proven by the whole suite.
 */
export class RouteCatalog {
  readonly routes: RouteSpec<z.ZodType, z.ZodType, z.ZodType>[] = [];
  constructor(readonly checkResponses = false) {}
}

/** An answer that does not match the schema its route documents (only raised with `checkResponses`). */
export class ResponseSchemaError extends ApiError {
  constructor(route: string, what: string, error: z.ZodError) {
    super(500, `The ${what} of ${route} does not match its documented schema: ${z.prettifyError(error)}`);
  }
}

/** Throws ResponseSchemaError when `value` does not parse with `schema`. */
function checkAgainst(schema: z.ZodType, value: unknown, route: string, what: string): void {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ResponseSchemaError(route, what, parsed.error);
}

declare module "fastify" {
  interface FastifyInstance {
    routeCatalog: RouteCatalog;
  }
  interface FastifyContextConfig {
    /** With `checkResponses`: checks a part of a JSON answer written piece by piece (`{key: [rows]}` of one page). */
    checkAnswer?: (value: unknown) => void;
    /** With `checkResponses`: checks one line of a JSON Lines stream. */
    checkStreamItem?: (item: unknown) => void;
  }
}

export function defineRoute<B extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, P extends z.ZodType = z.ZodUnknown>(
  app: FastifyInstance,
  spec: RouteSpec<B, Q, P>,
  handler: Handler<z.output<B>, z.output<Q>, z.output<P>>,
): void {
  const fullUrl = `${app.prefix}${spec.url}`;
  app.routeCatalog.routes.push({ ...spec, url: fullUrl } as RouteSpec<z.ZodType, z.ZodType, z.ZodType>);
  const checks = app.routeCatalog.checkResponses ? responseChecks(spec, `${spec.method} ${fullUrl}`) : { config: {}, preSerialization: undefined };
  app.route({
    method: spec.method,
    url: spec.url,
    config: { errorStyle: spec.errorStyle, ...(spec.prescan ? { prescan: spec.prescan } : {}), ...checks.config },
    ...(spec.bodyLimit !== undefined ? { bodyLimit: spec.bodyLimit } : {}),
    ...(checks.preSerialization ? { preSerialization: checks.preSerialization } : {}),
    handler: async (request, reply) => {
      spec.precheck?.(request.body);
      const input = parseRequest(spec, request);
      const result = await handler(input, request, reply);
      if (reply.sent) return reply;
      return result;
    },
  });
}

/** The checks `checkResponses` adds to a route: its JSON answers, the pieces of a written one, its JSON Lines. */
function responseChecks(spec: RouteSpec<z.ZodType, z.ZodType, z.ZodType>, route: string) {
  const { response, stream } = spec;
  const config: { checkAnswer?: (value: unknown) => void; checkStreamItem?: (item: unknown) => void } = {};
  if (response) config.checkAnswer = (value) => checkAgainst(response, value, route, "answer");
  if (stream && spec.streamFormat === "jsonl") config.checkStreamItem = (item) => checkAgainst(stream, item, route, "streamed line");
  const preSerialization = response
    ? (_request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (error: Error | null, payload?: unknown) => void) => {
        // Only a successful answer has the route's shape; errors have their surface's.
        if (reply.statusCode >= 300) return done(null, payload);
        try {
          checkAgainst(response, payload, route, "answer");
        } catch (error) {
          return done(error as Error);
        }
        done(null, payload);
      }
    : undefined;
  return { config, preSerialization };
}

/** Validates path, query and body together so one 422 lists every problem, as FastAPI does. */
function parseRequest<B extends z.ZodType, Q extends z.ZodType, P extends z.ZodType>(spec: RouteSpec<B, Q, P>, request: FastifyRequest): RouteInput<z.output<B>, z.output<Q>, z.output<P>> {
  const issues: ValidationIssue[] = [];
  const attempt = <S extends z.ZodType>(schema: S | undefined, value: unknown, location: "body" | "query" | "path"): z.output<S> => {
    if (!schema) return value as z.output<S>;
    try {
      return parseInput(schema, value, location);
    } catch (error) {
      if (error instanceof RequestValidationError) {
        issues.push(...error.issues);
        return undefined as z.output<S>;
      }
      throw error;
    }
  };
  const params = attempt(spec.params, request.params, "path");
  const query = attempt(spec.query, request.query, "query");
  const body = attempt(spec.body, request.body, "body");
  if (issues.length > 0) throw new RequestValidationError(issues);
  return { body, query, params };
}

/** The OpenAPI 3.1 document generated from the same zod schemas that validate requests. */
export function buildOpenApiDocument(catalog: RouteCatalog, info: { title: string; version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of catalog.routes) {
    const path = route.url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}").replace(/\*$/, "{path}");
    const operation: Record<string, unknown> = { summary: route.summary, tags: route.tags ?? [] };
    const parameters = [...describeParameters(route.params, "path"), ...describeParameters(route.query, "query")];
    if (parameters.length > 0) operation.parameters = parameters;
    if (route.body) operation.requestBody = { required: true, content: { "application/json": { schema: toJsonSchema(route.body) } } };
    const content: Record<string, unknown> = {};
    if (route.response) content["application/json"] = { schema: toJsonSchema(route.response) };
    if (route.stream) {
      if (route.streamFormat === "jsonl") content["application/jsonl"] = { schema: { description: "Each line (JSON Lines)", ...toJsonSchema(route.stream) } };
      else content["text/event-stream"] = { schema: { description: "Each server-sent event's data", ...toJsonSchema(route.stream) } };
    }
    if (route.rawResponse?.mediaType) content[route.rawResponse.mediaType] = { schema: { description: route.rawResponse.description } };
    operation.responses = {
      "200": { description: route.rawResponse && !route.rawResponse.mediaType ? route.rawResponse.description : "Successful response", ...(Object.keys(content).length > 0 ? { content } : {}) },
      "422": { description: "Validation error", content: { "application/json": { schema: { $ref: "#/components/schemas/HTTPValidationError" } } } },
    };
    if (route.security) operation.security = [{ [route.security === "bearer" ? "bearerAuth" : "basicAuth"]: [] }];
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation;
  }
  return {
    openapi: "3.1.0",
    info,
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" }, basicAuth: { type: "http", scheme: "basic" } },
      schemas: {
        HTTPValidationError: {
          type: "object",
          properties: {
            detail: {
              type: "array",
              items: {
                type: "object",
                required: ["loc", "msg", "type"],
                properties: { loc: { type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } }, msg: { type: "string" }, type: { type: "string" } },
              },
            },
          },
        },
      },
    },
  };
}

function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

function describeParameters(schema: z.ZodType | undefined, location: "path" | "query"): Record<string, unknown>[] {
  if (!schema) return [];
  const json = toJsonSchema(schema) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === "path" || (json.required ?? []).includes(name),
    schema: property,
    ...(typeof property.description === "string" ? { description: property.description } : {}),
  }));
}

/**
 * A check of a request body's text, fed chunk by chunk as it arrives. `end` throws the route's
 * error; it is also asked after every chunk, and must throw there only for a body that will fail
 * whatever follows (the rest is then read but not kept).
 */
export interface BodyScan {
  feed(chunk: string): void;
  end(): void;
}

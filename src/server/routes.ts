import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { ErrorStyle } from "./errors.js";
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
  /** Response body schema, for the documentation only. */
  response?: z.ZodType;
  /** With `stream: true` the 200 is server-sent events: the schema of each event's `data`, for the documentation only. */
  stream?: z.ZodType;
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

export interface RouteInput<B, Q, P> {
  body: B;
  query: Q;
  params: P;
}

type Handler<B, Q, P> = (input: RouteInput<B, Q, P>, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** Every route defined through `defineRoute`, in definition order, for the OpenAPI document. */
export class RouteCatalog {
  readonly routes: RouteSpec<z.ZodType, z.ZodType, z.ZodType>[] = [];
}

declare module "fastify" {
  interface FastifyInstance {
    routeCatalog: RouteCatalog;
  }
}

export function defineRoute<B extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, P extends z.ZodType = z.ZodUnknown>(
  app: FastifyInstance,
  spec: RouteSpec<B, Q, P>,
  handler: Handler<z.output<B>, z.output<Q>, z.output<P>>,
): void {
  const fullUrl = `${app.prefix}${spec.url}`;
  app.routeCatalog.routes.push({ ...spec, url: fullUrl } as RouteSpec<z.ZodType, z.ZodType, z.ZodType>);
  app.route({
    method: spec.method,
    url: spec.url,
    config: { errorStyle: spec.errorStyle, ...(spec.prescan ? { prescan: spec.prescan } : {}) },
    ...(spec.bodyLimit !== undefined ? { bodyLimit: spec.bodyLimit } : {}),
    handler: async (request, reply) => {
      spec.precheck?.(request.body);
      const input = parseRequest(spec, request);
      const result = await handler(input, request, reply);
      if (reply.sent) return reply;
      return result;
    },
  });
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
    if (route.stream) content["text/event-stream"] = { schema: { description: "Each server-sent event's data", ...toJsonSchema(route.stream) } };
    operation.responses = {
      "200": { description: "Successful response", ...(Object.keys(content).length > 0 ? { content } : {}) },
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

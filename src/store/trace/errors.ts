/**
 * Errors the trace store raises on purpose, with the status Weave's error registry gives each
 * (`docs/api/trace.md#errors`). The HTTP layer renders them as `{"reason": message, ...extra}`.
 */
export class TraceError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** InvalidRequest, InvalidExternalRef, ValueError: 400. */
export class TraceBadRequest extends TraceError {
  constructor(message: string) {
    super(400, message);
  }
}

/** InvalidFieldError (e.g. an object id with forbidden characters): 403. */
export class TraceInvalidField extends TraceError {
  constructor(message: string) {
    super(403, message);
  }
}

/** NotFoundError: 404. */
export class TraceNotFound extends TraceError {
  constructor(message: string) {
    super(404, message);
  }
}

/** ObjectDeletedError: 404 carrying when the version was deleted. */
export class TraceObjectDeleted extends TraceError {
  constructor(message: string, deletedAt: string) {
    super(404, message, { deleted_at: deletedAt });
  }
}

/** InsertTooLarge: 413. */
export class TraceInsertTooLarge extends TraceError {
  constructor(message: string) {
    super(413, message);
  }
}

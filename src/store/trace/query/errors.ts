import { TraceError } from "../errors.js";

/** A query (filter, sort or `query` expression) the server cannot run as asked; answered with 400. */
export class QueryError extends TraceError {
  constructor(message: string) {
    super(400, message);
  }
}

/** A request whose data exceeds a storage or aggregation limit; answered with 413. */
export class TooLargeError extends TraceError {
  constructor(message: string) {
    super(413, message);
  }
}

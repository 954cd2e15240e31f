/**
 * What the trace-object side needs to know about calls: annotation queue items cache a call's
 * header when it is added. The calls store implements it.
 */
export interface CallHeader {
  id: string;
  traceId: string;
  opName: string;
  startedAt: string;
  endedAt: string | null;
}

export interface CallHeaderLookup {
  /** The live (not deleted) calls of the project among `callIds`, in any order. */
  findCalls(projectId: string, callIds: string[]): Promise<CallHeader[]>;
}

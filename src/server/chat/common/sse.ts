import { PassThrough } from "node:stream";

/**
 * Server-sent events as vLLM frames them (`docs/api/chat.md#sse-framing`): each event exactly
 * `data: <compact JSON>\n\n`, then `data: [DONE]\n\n`; no ids, names or keep-alive comments.
 * Writes wait for the socket to drain, so a slow client slows its own generation down
 * instead of piling up chunks in memory.
 */
export class SseStream {
  readonly body = new PassThrough();
  private closed = false;

  constructor() {
    this.body.once("close", () => {
      this.closed = true;
    });
  }

  /** False once the client went away (the body was destroyed). */
  get open(): boolean {
    return !this.closed && !this.body.destroyed && !this.body.writableEnded;
  }

  async send(data: unknown): Promise<void> {
    await this.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** A named event (`event: <name>\ndata: <json>\n\n`), as the Responses and Messages APIs frame theirs. */
  async sendNamed(event: string, data: unknown): Promise<void> {
    await this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** `[DONE]` and the end of the stream. */
  async done(): Promise<void> {
    await this.write("data: [DONE]\n\n");
    this.end();
  }

  /** The end of the stream without `[DONE]` (APIs whose last event says it is the last). */
  end(): void {
    if (this.open) this.body.end();
  }

  private async write(text: string): Promise<void> {
    if (!this.open) return;
    if (this.body.write(text)) return;
    await new Promise<void>((resolve) => {
      const settle = () => {
        this.body.off("drain", settle);
        this.body.off("close", settle);
        resolve();
      };
      this.body.once("drain", settle);
      this.body.once("close", settle);
    });
  }
}

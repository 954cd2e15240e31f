import { RequestValidationError } from "../../validation.js";

/** One part of a multipart/form-data body. */
export interface FormPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

const CRLF = Buffer.from("\r\n");
const HEADER_END = Buffer.from("\r\n\r\n");

function malformed(message: string): RequestValidationError {
  return RequestValidationError.single(["body"], `Invalid multipart body: ${message}`, "value_error");
}

/**
 * Parses a buffered multipart/form-data body (RFC 7578): the parts between `--boundary` lines, each
 * with its Content-Disposition name (and filename) and raw bytes. Files the trace API receives are
 * small enough to buffer (the request body limit bounds them).
 */
export function parseMultipart(body: Buffer, contentType: string | undefined): FormPart[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType ?? "");
  const boundaryText = boundary?.[1] ?? boundary?.[2]?.trim();
  if (!boundaryText) throw malformed("the content type names no boundary");
  const delimiter = Buffer.from(`--${boundaryText}`);
  const nextDelimiter = Buffer.from(`\r\n--${boundaryText}`);

  let position = body.indexOf(delimiter);
  if (position < 0) throw malformed("no boundary line found");
  const parts: FormPart[] = [];
  for (;;) {
    position += delimiter.length;
    if (body[position] === 0x2d && body[position + 1] === 0x2d) return parts;
    if (!body.subarray(position, position + 2).equals(CRLF)) throw malformed("a boundary line is not followed by a line break");
    position += 2;
    const headerEnd = body.indexOf(HEADER_END, position);
    if (headerEnd < 0) throw malformed("a part has no end of headers");
    const headers = parseHeaders(body.subarray(position, headerEnd).toString("utf8"));
    const dataStart = headerEnd + HEADER_END.length;
    const dataEnd = body.indexOf(nextDelimiter, dataStart);
    if (dataEnd < 0) throw malformed("the closing boundary is missing");
    const disposition = headers.get("content-disposition") ?? "";
    const name = dispositionParam(disposition, "name");
    if (name === undefined) throw malformed("a part has no name");
    parts.push({ name, filename: dispositionParam(disposition, "filename"), contentType: headers.get("content-type"), data: body.subarray(dataStart, dataEnd) });
    position = dataEnd + 2;
  }
}

function parseHeaders(text: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function dispositionParam(disposition: string, param: string): string | undefined {
  const match = new RegExp(`(?:^|;)\\s*${param}="((?:[^"\\\\]|\\\\.)*)"`, "i").exec(disposition) ?? new RegExp(`(?:^|;)\\s*${param}=([^;]*)`, "i").exec(disposition);
  return match?.[1]?.replace(/\\(.)/g, "$1");
}

/** The text value of a form field, or a 422 naming it when absent. */
export function requiredField(parts: FormPart[], name: string): FormPart {
  const part = parts.find((candidate) => candidate.name === name);
  if (!part) throw RequestValidationError.single(["body", name], "Field required", "missing");
  return part;
}

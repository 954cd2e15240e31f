/**
 * GGUF v3, the single-file model format of llama.cpp/ggml (the GGUF specification in the ggml repository):
 *
 *   "GGUF" · u32 version · u64 tensor count · u64 metadata count
 *   metadata: string key · u32 value type · value   (arrays: u32 item type · u64 count · items)
 *   tensor infos: string name · u32 dims · u64 size per dim (fastest-varying first) · u32 ggml type · u64 offset
 *   padding to the alignment · tensor data (each tensor at its offset from here, offsets aligned)
 *
 * Strings are a u64 byte length and UTF-8 bytes; everything is little-endian.
 */

export const GGUF_MAGIC = "GGUF";
export const GGUF_VERSION = 3;
/** Used when `general.alignment` is absent (and by llama.cpp's converter). */
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** Metadata value types (gguf_type). */
export enum GgufType {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
}

/** A metadata value as this code reads and writes it: 64-bit integers are bigints. */
export type GgufScalar = number | bigint | boolean | string;

export type GgufValue = { type: Exclude<GgufType, GgufType.ARRAY>; value: GgufScalar } | { type: GgufType.ARRAY; itemType: Exclude<GgufType, GgufType.ARRAY>; value: GgufScalar[] };

/** The tensor types this code writes (ggml_type ids). */
export enum GgmlType {
  F32 = 0,
  F16 = 1,
  BF16 = 30,
}

/** `general.file_type` (llama_ftype): what most tensors are stored as. */
export const FILE_TYPE: Record<GgmlType, number> = {
  [GgmlType.F32]: 0, // ALL_F32
  [GgmlType.F16]: 1, // MOSTLY_F16
  [GgmlType.BF16]: 32, // MOSTLY_BF16
};

export function ggmlTypeSize(type: number): number | undefined {
  if (type === GgmlType.F32) return 4;
  if (type === GgmlType.F16 || type === GgmlType.BF16) return 2;
  return undefined;
}

/** Token types of `tokenizer.ggml.token_type` (llama_token_type). */
export enum TokenType {
  NORMAL = 1,
  UNKNOWN = 2,
  CONTROL = 3,
  USER_DEFINED = 4,
  UNUSED = 5,
  BYTE = 6,
}

export const u32 = (value: number): GgufValue => ({ type: GgufType.UINT32, value });
export const f32 = (value: number): GgufValue => ({ type: GgufType.FLOAT32, value });
export const str = (value: string): GgufValue => ({ type: GgufType.STRING, value });
export const bool = (value: boolean): GgufValue => ({ type: GgufType.BOOL, value });
export const strings = (value: string[]): GgufValue => ({ type: GgufType.ARRAY, itemType: GgufType.STRING, value });
export const int32s = (value: number[]): GgufValue => ({ type: GgufType.ARRAY, itemType: GgufType.INT32, value });

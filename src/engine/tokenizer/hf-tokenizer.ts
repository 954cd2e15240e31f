import fs from "node:fs";
import path from "node:path";
import { Tokenizer as LibTokenizer } from "@huggingface/tokenizers";
import { CheckpointError } from "../checkpoint/errors.js";
import { describe, isObject, type JsonObject, readJsonObject } from "../checkpoint/json-file.js";
import type { TokenizerConfig } from "../checkpoint/tokenizer-config.js";
import { fromByteLevel } from "./byte-level.js";
import type { Tokenizer } from "./types.js";

/** How vocabulary strings map back to bytes. */
type PieceEncoding = "byte-level" | "sentencepiece";

const encoder = new TextEncoder();
const EMPTY = new Uint8Array(0);

/**
 * The `Tokenizer` of a Hugging Face checkpoint: `tokenizer.json` run by @huggingface/tokenizers,
 * with the special tokens of `tokenizer_config.json`. Byte-level BPE (GPT-2, Llama 3, Qwen) and
 * SentencePiece-style BPE with byte fallback (Llama 2) vocabularies are supported.
 *
 * Ids at or above `vocabSize` (padding rows of a larger embedding) decode to nothing, because a
 * model may sample them.
 */
export class HfTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosTokenId: number | undefined;
  readonly eosTokenId: number | undefined;
  readonly sourceDir: string | undefined;
  private readonly lib: LibTokenizer;
  private readonly pieces: (string | undefined)[];
  private readonly addedTokens = new Map<number, string>();
  private readonly specialIds = new Set<number>();
  private readonly bytesCache: (Uint8Array | undefined)[];
  private readonly pieceEncoding: PieceEncoding;
  private readonly cleanUpSpaces: boolean;

  constructor(json: JsonObject, config: TokenizerConfig, file = "tokenizer.json", sourceDir?: string) {
    this.sourceDir = sourceDir;
    const model = json.model;
    if (!isObject(model) || model.type !== "BPE") {
      throw new CheckpointError(file, "model.type", `${describe(isObject(model) ? model.type : model)} is not supported (BPE tokenizers only)`);
    }
    this.pieceEncoding = pieceEncoding(json, file);
    try {
      this.lib = new LibTokenizer(json, config.raw);
    } catch (error) {
      throw new CheckpointError(file, undefined, `cannot be loaded: ${(error as Error).message}`);
    }
    const vocab = this.lib.get_vocab(true);
    this.pieces = [];
    for (const [piece, id] of vocab) this.pieces[id] = piece;
    for (const [id, token] of this.lib.get_added_tokens_decoder()) {
      this.addedTokens.set(id, token.content);
      if (token.special) this.specialIds.add(id);
    }
    this.vocabSize = this.pieces.length;
    this.bytesCache = new Array(this.vocabSize);
    const configFile = path.join(path.dirname(file), "tokenizer_config.json");
    const idOf = (token: string | undefined, field: string): number | undefined => {
      if (token === undefined) return undefined;
      const id = this.tokenId(token);
      if (id === undefined) throw new CheckpointError(configFile, field, `names ${JSON.stringify(token)}, which is not in ${path.basename(file)}`);
      return id;
    };
    this.bosTokenId = idOf(config.bosToken, "bos_token");
    this.eosTokenId = idOf(config.eosToken, "eos_token");
    for (const token of [config.padToken, config.unkToken, ...config.additionalSpecialTokens]) {
      const id = token === undefined ? undefined : this.tokenId(token);
      if (id !== undefined) this.specialIds.add(id);
    }
    for (const id of [this.bosTokenId, this.eosTokenId]) if (id !== undefined) this.specialIds.add(id);
    this.cleanUpSpaces = config.cleanUpTokenizationSpaces;
  }

  /** Loads `<dir>/tokenizer.json` with the already-read tokenizer_config.json. */
  static load(dir: string, config: TokenizerConfig): HfTokenizer {
    const file = path.join(dir, "tokenizer.json");
    if (!fs.existsSync(file)) throw new CheckpointError(file, undefined, "is missing (only fast tokenizers saved as tokenizer.json are supported)");
    return new HfTokenizer(readJsonObject(file), config, file, dir);
  }

  /** Encodes text; `addSpecialTokens` (default false) runs the post-processor, e.g. to add BOS. */
  encode(text: string, options: { addSpecialTokens?: boolean } = {}): number[] {
    return this.lib.encode(text, { add_special_tokens: options.addSpecialTokens ?? false }).ids;
  }

  /**
   * Decodes ids to text. `spacesBetweenSpecialTokens` is accepted and has no effect, as with every
   * fast tokenizer in transformers and vLLM.
   */
  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean; spacesBetweenSpecialTokens?: boolean } = {}): string {
    const known = ids.filter((id) => {
      this.checkId(id);
      return id < this.vocabSize && this.pieces[id] !== undefined && !(options.skipSpecialTokens && this.specialIds.has(id));
    });
    if (known.length === 0) return "";
    return this.lib.decode(known, { skip_special_tokens: false, clean_up_tokenization_spaces: this.cleanUpSpaces });
  }

  tokenBytes(id: number): Uint8Array {
    this.checkId(id);
    if (id >= this.vocabSize) return EMPTY;
    const cached = this.bytesCache[id];
    if (cached) return cached;
    const bytes = this.computeBytes(id);
    this.bytesCache[id] = bytes;
    return bytes;
  }

  tokenString(id: number): string | undefined {
    return Number.isInteger(id) && id >= 0 ? this.pieces[id] : undefined;
  }

  tokenId(token: string): number | undefined {
    return this.lib.token_to_id(token);
  }

  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }

  private computeBytes(id: number): Uint8Array {
    const added = this.addedTokens.get(id);
    if (added !== undefined) return encoder.encode(added);
    const piece = this.pieces[id];
    if (piece === undefined) return EMPTY;
    if (this.pieceEncoding === "byte-level") return fromByteLevel(piece);
    const byteToken = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
    if (byteToken) return Uint8Array.of(parseInt(byteToken[1]!, 16));
    return encoder.encode(piece.replaceAll("▁", " "));
  }

  private checkId(id: number): void {
    if (!Number.isInteger(id) || id < 0) throw new RangeError(`invalid token id ${id}`);
  }
}

/** Tells byte-level vocabularies from SentencePiece-style ones by the decoder, which undoes them. */
function pieceEncoding(json: JsonObject, file: string): PieceEncoding {
  const decoder = json.decoder;
  if (!isObject(decoder)) throw new CheckpointError(file, "decoder", `is missing or not an object, got ${describe(decoder)}`);
  const types = decoder.type === "Sequence" && Array.isArray(decoder.decoders) ? decoder.decoders.map((d) => (isObject(d) ? d.type : undefined)) : [decoder.type];
  if (types.includes("ByteLevel")) return "byte-level";
  if (types.includes("ByteFallback") || types.includes("Metaspace")) return "sentencepiece";
  throw new CheckpointError(file, "decoder.type", `${describe(decoder.type)} is not supported (byte-level or SentencePiece-style BPE tokenizers only)`);
}

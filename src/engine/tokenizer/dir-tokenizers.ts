import { readTokenizerConfig } from "../checkpoint/tokenizer-config.js";
import { HfTokenizer } from "./hf-tokenizer.js";

/**
 * Tokenizers read from checkpoint directories, as `loadModelFiles` reads them, keeping the few most
 * recently used: a prompt thread serves every model, but a tokenizer is too large to read again
 * for each prompt.
 */
export class DirTokenizers {
  private readonly loaded = new Map<string, HfTokenizer>();

  constructor(private readonly capacity = 2) {}

  get(dir: string): HfTokenizer {
    let tokenizer = this.loaded.get(dir);
    if (tokenizer) this.loaded.delete(dir);
    else tokenizer = HfTokenizer.load(dir, readTokenizerConfig(dir));
    // Map order is insertion order: the first key is the least recently used.
    this.loaded.set(dir, tokenizer);
    while (this.loaded.size > this.capacity) this.loaded.delete(this.loaded.keys().next().value!);
    return tokenizer;
  }
}

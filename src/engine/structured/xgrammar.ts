import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type * as Xgrammar from "@mlc-ai/web-xgrammar";
import { XgrammarCallError, XgrammarUnavailableError } from "./errors.js";

/** The API of `@mlc-ai/web-xgrammar` (xgrammar compiled to WebAssembly). */
export type XgrammarApi = typeof Xgrammar;

type BundleConsole = Pick<Console, "log" | "error" | "warn" | "info" | "debug">;

const requireHere = createRequire(import.meta.url);
// Node's type declarations know WebAssembly only as types; the class is there at run time.
const WasmRuntimeError = (globalThis as unknown as { WebAssembly: { RuntimeError: new () => Error } }).WebAssembly.RuntimeError;
let bundle: Promise<{ file: string; source: string }> | undefined;

/**
 * One instance of the xgrammar WebAssembly module.
 *
 * The package ships a UMD bundle that expects CommonJS globals. Rather than setting `require` and
 * `__filename` on `globalThis` for the whole process, each runtime evaluates the bundle as a
 * CommonJS module body with those names (and `console`) passed in. That gives every runtime its own
 * WASM memory, and lets it hear what the C++ code prints: xgrammar reports a bad grammar, schema or
 * regex by printing `[FATAL] file.cc:N: reason` and then aborting, so the printed reason is the only
 * place the error text exists.
 */
export class XgrammarRuntime {
  /** Calls that aborted inside the module; each may leave a little WASM memory behind. */
  failures = 0;
  private lastFatal: string | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private api_: XgrammarApi | undefined;

  private constructor() {}

  get api(): XgrammarApi {
    if (!this.api_) throw new XgrammarUnavailableError("xgrammar runtime used before it was loaded");
    return this.api_;
  }

  /** Loads a fresh instance of the module and initialises it (about 20 ms). */
  static async load(): Promise<XgrammarRuntime> {
    const runtime = new XgrammarRuntime();
    try {
      const { file, source } = await readBundle();
      runtime.api_ = evaluateBundle(file, source, runtime.printer());
      // Instantiating the WASM happens on first use; do it now so a broken install fails here.
      const probe = await runtime.api_.Grammar.fromEBNF('root ::= "a"');
      probe.dispose();
    } catch (error) {
      bundle = undefined;
      const reason = error instanceof Error ? error.message : String(error);
      throw new XgrammarUnavailableError(`Structured outputs are unavailable: the xgrammar module (@mlc-ai/web-xgrammar) could not be loaded: ${reason}`);
    }
    return runtime;
  }

  /**
   * Runs `fn` against the module, one call at a time, so that the reason printed by a failing call is
   * attributed to that call. Aborts and C++ exceptions become `XgrammarCallError`; other errors pass.
   */
  call<T>(fn: (api: XgrammarApi) => T | Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      this.lastFatal = undefined;
      try {
        return await fn(this.api);
      } catch (error) {
        throw this.asCallError(error);
      }
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /**
   * Turns what a direct (hot-path) call threw into an `XgrammarCallError` when it came from the C++
   * side: a WebAssembly abort, or a bare number (a C++ exception pointer). Other errors are returned as is.
   */
  asCallError(error: unknown): unknown {
    if (error instanceof XgrammarCallError) return error;
    if (!(error instanceof WasmRuntimeError) && typeof error !== "number") return error;
    this.failures++;
    const reason = this.lastFatal;
    this.lastFatal = undefined;
    return new XgrammarCallError(reason);
  }

  /** The `console` the bundle sees: FATAL lines are kept as the reason of the next failure; the rest is noise. */
  private printer(): BundleConsole {
    const hear = (...parts: unknown[]) => {
      const reason = fatalReason(parts.map(String).join(" "));
      if (reason !== undefined) this.lastFatal = reason;
    };
    return { log: hear, error: hear, warn: hear, info: hear, debug: hear };
  }
}

/** `[FATAL] /some/path/file.cc:75: Check failed: (x) is false: reason` → `reason`. */
export function fatalReason(line: string): string | undefined {
  const match = /^\[FATAL\] .*?\.(?:cc|h|cpp):\d+: ([\s\S]*)$/.exec(line.trim());
  if (!match) return undefined;
  return match[1]!.replace(/^Check failed: \(.*?\) is false: /s, "").trim();
}

/**
 * A lazily loaded runtime that is replaced by a fresh one after `maxFailures` aborted calls, for work
 * on untrusted input (each abort may leak a little of the instance's memory).
 */
export class RecyclingRuntime {
  private current: Promise<XgrammarRuntime> | undefined;

  constructor(private readonly maxFailures: number) {}

  async get(): Promise<XgrammarRuntime> {
    if (this.current) {
      const runtime = await this.current.catch(() => undefined);
      if (runtime && runtime.failures < this.maxFailures) return runtime;
    }
    this.current = XgrammarRuntime.load();
    return this.current;
  }
}

function readBundle(): Promise<{ file: string; source: string }> {
  bundle ??= (async () => {
    const file = requireHere.resolve("@mlc-ai/web-xgrammar");
    return { file, source: await readFile(file, "utf8") };
  })();
  return bundle;
}

function evaluateBundle(file: string, source: string, printer: BundleConsole): XgrammarApi {
  const module = { exports: {} as Record<string, unknown> };
  const requireFromBundle = createRequire(file);
  // The bundle's one dynamic import, of Node's `module`, is served by require: code made by
  // new Function may not import() under every loader (vitest's, for one).
  const patched = source.replaceAll("import('module')", "__importBuiltin('module')");
  const importBuiltin = async (name: string) => requireFromBundle(name) as unknown;
  // The same wrapper Node's CommonJS loader puts around a module, plus `console`.
  const body = new Function("exports", "module", "require", "__filename", "__dirname", "console", "__importBuiltin", patched);
  body(module.exports, module, requireFromBundle, file, path.dirname(file), printer, importBuiltin);
  const api = module.exports as unknown as XgrammarApi;
  if (typeof api.GrammarCompiler !== "function") throw new Error("the bundle did not export GrammarCompiler");
  return api;
}

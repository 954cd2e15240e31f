import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CheckpointError } from "../checkpoint/errors.js";
import { encodeSafetensors } from "../checkpoint/safetensors.js";
import { encodeOptimizerState, readOptimizerState } from "./optimizer-file.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "flywheel-optimizer-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("optimizer state file", () => {
  it("round-trips the moments, the step count and the mode", () => {
    const state = { step: 7, mode: "sft" as const, expAvg: [Float32Array.from([1, -2.5]), Float32Array.from([3e-8])], expAvgSq: [Float32Array.from([4, 5]), Float32Array.from([6])] };
    const file = path.join(dir, "state.safetensors");
    fs.writeFileSync(file, encodeOptimizerState(state));
    expect(readOptimizerState(file)).toEqual(state);
    fs.writeFileSync(file, encodeOptimizerState({ step: 0, mode: null, expAvg: [], expAvgSq: [] }));
    expect(readOptimizerState(file)).toEqual({ step: 0, mode: null, expAvg: [], expAvgSq: [] });
  });

  it("refuses another file's form, naming the field", () => {
    const file = path.join(dir, "other.safetensors");
    fs.writeFileSync(file, encodeSafetensors([], { format: "pt" }));
    expect(() => readOptimizerState(file)).toThrow(CheckpointError);
    expect(() => readOptimizerState(file)).toThrow(/__metadata__\.format/);
  });
});

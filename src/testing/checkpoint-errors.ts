import { expect } from "vitest";
import { CheckpointError } from "../engine/checkpoint/errors.js";

/** Asserts that `action` throws a CheckpointError naming `file` and `field`, with a message matching `message`. */
export function expectCheckpointError(action: () => unknown, file: string, field: string | undefined, message: RegExp): CheckpointError {
  let thrown: unknown;
  try {
    action();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, "expected a CheckpointError").toBeInstanceOf(CheckpointError);
  const error = thrown as CheckpointError;
  expect({ file: error.file, field: error.field }).toEqual({ file, field });
  expect(error.message).toMatch(message);
  expect(error.message).toContain(file);
  if (field !== undefined) expect(error.message).toContain(field);
  return error;
}

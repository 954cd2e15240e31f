/**
 * A checkpoint file that is missing, malformed or asks for something Flywheel does not support.
 * The message always names the file and, where one is at fault, the field (a dotted JSON path or a
 * tensor name), so a user can fix the checkpoint without reading our code.
 */
export class CheckpointError extends Error {
  constructor(
    /** The file at fault (as given: usually an absolute path). */
    readonly file: string,
    /** The field at fault, e.g. `rope_scaling.factor` or `model.layers.0.mlp.up_proj.weight`. */
    readonly field: string | undefined,
    detail: string,
  ) {
    super(field === undefined ? `${file}: ${detail}` : `${file}: '${field}' ${detail}`);
    this.name = "CheckpointError";
  }
}

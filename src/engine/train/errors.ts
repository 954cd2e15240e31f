/**
 * Bad training input (a trajectory, an SFT example or a config value) that the trainer cannot use.
 * `loc` names the offending value the way a 422 `detail` item does (e.g.
 * `["trajectory_groups", 0, "trajectories", 2, "messages_and_choices", 5]`), so the job layer can
 * report it as a validation error or as the `error_message` of `training_failed`.
 */
export class TrainingInputError extends Error {
  constructor(
    readonly loc: (string | number)[],
    /** The message without the location. */
    readonly detail: string,
  ) {
    super(loc.length > 0 ? `${loc.join(".")}: ${detail}` : detail);
    this.name = "TrainingInputError";
  }
}

export type Loc = (string | number)[];

/**
 * A step whose loss, gradient or updated weights are not finite (NaN or ±∞). Stepping on would
 * poison the checkpoint, so the job fails with this message and commits nothing.
 */
export class NonFiniteTrainingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NonFiniteTrainingError";
  }
}

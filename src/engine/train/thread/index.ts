/**
 * Training off the event loop: `TrainerThreads` keeps one worker thread per base model
 * (`trainer-worker.ts` loads the model and steps `runTrainingJob`), and streams each job's
 * updates back as an async iterable.
 */
export * from "./protocol.js";
export * from "./trainer-thread.js";
export * from "./trainer-threads.js";

import { sql } from "kysely";
import type { TraceDb } from "../call-tables.js";

/**
 * Which part of a long needle PostgreSQL's trigram index should look up. `pg_trgm` answers
 * `ILIKE '%needle%'` by intersecting the index lists of every trigram of the needle, common ones
 * included: "Question number 123456:" read the lists of "que", "ues", "num"… (each holding nearly
 * every call) to find the one call that also has "123". Any part of the needle finds a superset of
 * the needle's calls, and the query's own condition decides, so the look-up may ask for the part
 * whose trigrams are rarest: estimated from the trigrams of a small sample of the project's
 * documents, taken once in a while.
 */

/** Documents in a sample, and how much of each is read. */
const SAMPLE_DOCUMENTS = 500;
const SAMPLE_CHARACTERS = 2000;
/** Below this many documents a sample says too little: the whole needle is looked up. */
const MIN_SAMPLE = 100;
const SAMPLE_TTL_MS = 10 * 60_000;
const MAX_PROJECTS = 100;

const RUN = /[a-z0-9]{3,}/g;

/** The distinct inner trigrams of the ASCII letter/digit runs of `text` (case folded). */
function trigramsOf(text: string): Set<string> {
  const trigrams = new Set<string>();
  for (const run of text.toLowerCase().match(RUN) ?? []) for (let i = 0; i + 3 <= run.length; i++) trigrams.add(run.slice(i, i + 3));
  return trigrams;
}

/** How many sampled documents hold each trigram. */
export interface TrigramCounts {
  documents: number;
  counts: Map<string, number>;
}

export function countTrigrams(documents: string[]): TrigramCounts {
  const counts = new Map<string, number>();
  for (const document of documents) for (const trigram of trigramsOf(document)) counts.set(trigram, (counts.get(trigram) ?? 0) + 1);
  return { documents: documents.length, counts };
}

/**
 * The needle's ASCII letter/digit run whose rarest trigram is rarest in the sample (the longer of
 * equals), when the needle has several runs; otherwise the needle itself.
 */
export function rarestPart(needle: string, sample: TrigramCounts): string {
  const runs = needle.match(/[A-Za-z0-9]{3,}/g) ?? [];
  if (runs.length < 2 || sample.documents < MIN_SAMPLE) return needle;
  let best = needle;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const run of runs) {
    let score = Number.POSITIVE_INFINITY;
    for (const trigram of trigramsOf(run)) score = Math.min(score, sample.counts.get(trigram) ?? 0);
    if (score < bestScore || (score === bestScore && run.length > best.length)) {
      best = run;
      bestScore = score;
    }
  }
  return best;
}

/** Trigram samples of the projects' text documents (PostgreSQL), kept for a while. */
export class TrigramSamples {
  private readonly samples = new Map<string, { takenAt: number; sample: Promise<TrigramCounts> }>();

  constructor(private readonly db: TraceDb) {}

  /** The part of `needle` to look up in `projectId`'s text index. */
  async searchPart(projectId: string, needle: string): Promise<string> {
    if ((needle.match(/[A-Za-z0-9]{3,}/g) ?? []).length < 2) return needle;
    return rarestPart(needle, await this.sample(projectId));
  }

  private sample(projectId: string): Promise<TrigramCounts> {
    const known = this.samples.get(projectId);
    if (known && Date.now() - known.takenAt < SAMPLE_TTL_MS) return known.sample;
    if (this.samples.size >= MAX_PROJECTS) this.samples.delete(this.samples.keys().next().value!);
    const sample = sql<{ body: string }>`SELECT left(body, ${SAMPLE_CHARACTERS}) AS body FROM trace_call_text WHERE project_id = ${projectId} LIMIT ${SAMPLE_DOCUMENTS}`
      .execute(this.db)
      .then((result) => countTrigrams(result.rows.map((row) => row.body)));
    // A failed sample is taken again next time.
    sample.catch(() => this.samples.delete(projectId));
    this.samples.delete(projectId);
    this.samples.set(projectId, { takenAt: Date.now(), sample });
    return sample;
  }
}

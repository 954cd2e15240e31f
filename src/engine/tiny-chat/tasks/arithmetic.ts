import type { TinyChatExample } from "../examples.js";
import { fill } from "../examples.js";
import type { TaskRandom } from "../random.js";

const ADDITION = ["What is {a} + {b}?", "What is {a} plus {b}?", "Compute {a} + {b}.", "Calculate {a} + {b}.", "{a} + {b} = ?", "How much is {a} plus {b}?", "Add {a} and {b}.", "What do you get when you add {a} and {b}?"];
const SUBTRACTION = [
  "What is {a} - {b}?",
  "What is {a} minus {b}?",
  "Compute {a} - {b}.",
  "Calculate {a} - {b}.",
  "{a} - {b} = ?",
  "How much is {a} minus {b}?",
  "Subtract {b} from {a}.",
  "What do you get when you take {b} from {a}?",
];

/** A number of one or two digits (two more often: there are more of them). */
function operand(random: TaskRandom): number {
  return random.chance(0.2) ? random.between(0, 9) : random.between(10, 99);
}

/**
 * The worked sum or difference of two numbers below 100, column by column as on paper: the
 * problem restated in one form whatever the wording, then the ones (with the carry or borrow),
 * then the tens. Each line needs only single-digit facts and values copied from the lines above,
 * which a small model learns; the answer is then read off the last two lines.
 */
export function columnWork(a: number, b: number, subtract: boolean): string {
  const [a1, a0, b1, b0] = [Math.floor(a / 10), a % 10, Math.floor(b / 10), b % 10];
  if (!subtract) {
    const ones = a0 + b0;
    const carry = ones >= 10 ? 1 : 0;
    return `${a} + ${b}\nones: ${a0} + ${b0} = ${ones}\ntens: ${a1} + ${b1} + ${carry} = ${a1 + b1 + carry}`;
  }
  const borrow = a0 < b0 ? 1 : 0;
  const ones = borrow ? `1${a0} - ${b0} = ${a0 + 10 - b0}` : `${a0} - ${b0} = ${a0 - b0}`;
  return `${a} - ${b}\nones: ${ones}\ntens: ${a1} - ${b1} - ${borrow} = ${a1 - b1 - borrow}`;
}

/**
 * Short additions and subtractions of numbers below 100: the column work as reasoning (a
 * `<think>` block, which the chat API returns as `reasoning`), then the number alone.
 */
export function arithmeticExample(random: TaskRandom): TinyChatExample {
  const subtract = random.chance(0.5);
  let [a, b] = [operand(random), operand(random)];
  if (subtract && a < b) [a, b] = [b, a];
  const result = subtract ? a - b : a + b;
  const question = fill(random.pick(subtract ? SUBTRACTION : ADDITION), { a, b });
  return {
    task: "arithmetic",
    key: `${subtract ? "sub" : "add"}:${a}:${b}`,
    messages: [
      { role: "user", content: question },
      { role: "assistant", content: String(result), reasoning_content: columnWork(a, b, subtract) },
    ],
    expected: { kind: "number", value: result },
  };
}

const THREE_TERMS = ["What is {a} + {b} + {c}?", "Compute {a} + {b} + {c}.", "{a} + {b} + {c} = ?", "Add {a}, {b} and {c}."];

/** The worked sum of several numbers: the terms restated, then the column work of adding each term to the running sum. */
export function chainedColumnWork(terms: readonly number[]): string {
  const lines = [terms.join(" + ")];
  let sum = terms[0]!;
  for (const term of terms.slice(1)) {
    lines.push(columnWork(sum, term, false));
    sum += term;
  }
  return lines.join("\n");
}

/**
 * Sums of three numbers from 1 to 30, worked as two column additions. The mixture holds few of
 * them on purpose: the skill stays weak after SFT, which leaves the RL example (examples/rl.ts)
 * something real to teach.
 */
export function threeTermExample(random: TaskRandom): TinyChatExample {
  const terms = [random.between(1, 30), random.between(1, 30), random.between(1, 30)];
  const [a, b, c] = terms as [number, number, number];
  return {
    task: "three_terms",
    key: `add3:${a}:${b}:${c}`,
    messages: [
      { role: "user", content: fill(random.pick(THREE_TERMS), { a, b, c }) },
      { role: "assistant", content: String(a + b + c), reasoning_content: chainedColumnWork(terms) },
    ],
    expected: { kind: "number", value: a + b + c },
  };
}

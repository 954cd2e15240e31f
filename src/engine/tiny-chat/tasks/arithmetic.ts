import type { TinyChatExample } from "../examples.js";
import { fill } from "../examples.js";
import type { TaskRandom } from "../random.js";

const ADDITION = ["What is {a} + {b}?", "What is {a} plus {b}?", "Compute {a} + {b}.", "Calculate {a} + {b}.", "{a} + {b} = ?", "How much is {a} plus {b}?", "Add {a} and {b}.", "What do you get when you add {a} and {b}?"];
const SUBTRACTION = ["What is {a} - {b}?", "What is {a} minus {b}?", "Compute {a} - {b}.", "Calculate {a} - {b}.", "{a} - {b} = ?", "How much is {a} minus {b}?", "Subtract {b} from {a}.", "What do you get when you take {b} from {a}?"];

/** A number of one or two digits (two more often: there are more of them). */
function operand(random: TaskRandom): number {
  return random.chance(0.2) ? random.between(0, 9) : random.between(10, 99);
}

/** Short additions and subtractions of numbers below 100, answered with the number alone. */
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
      { role: "assistant", content: String(result) },
    ],
    expected: { kind: "number", value: result },
  };
}

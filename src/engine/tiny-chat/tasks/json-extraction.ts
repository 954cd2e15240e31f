import { fill, jsonText, type TinyChatExample } from "../examples.js";
import type { TaskRandom } from "../random.js";
import { CITIES, CONDITIONS, ITEMS, personName } from "../words.js";

/** A kind of record: sentences that state it, instructions that ask for it, and its fields. */
interface RecordKind {
  name: string;
  sentences: string[];
  instructions: string[];
  draw(random: TaskRandom): Record<string, string | number>;
}

const KINDS: RecordKind[] = [
  {
    name: "person",
    sentences: ["{name} is {age} years old.", "{name} turned {age} this year.", "Meet {name}, who is {age}.", "My friend {name} is {age}."],
    instructions: ["Extract the name and age as JSON.", "Return JSON with the name and age.", "Give me a JSON object with name and age."],
    draw: (random) => ({ name: personName(random), age: random.between(3, 95) }),
  },
  {
    name: "resident",
    sentences: ["{name} is {age} and lives in {city}.", "{name}, aged {age}, lives in {city}.", "In {city} lives {name}, who is {age}."],
    instructions: ["Extract the name, age and city as JSON.", "Return JSON with name, age and city."],
    draw: (random) => ({ name: personName(random), age: random.between(18, 90), city: random.pick(CITIES) }),
  },
  {
    name: "product",
    sentences: ["The {item} costs {price} dollars.", "A {item} sells for {price} dollars.", "I paid {price} dollars for the {item}."],
    instructions: ["Extract the item and price as JSON.", "Return JSON with the item and price.", "Give me a JSON object with item and price."],
    draw: (random) => ({ item: random.pick(ITEMS), price: random.between(2, 900) }),
  },
  {
    name: "weather",
    sentences: ["It is {temperature} degrees and {condition} in {city}.", "{city} is {condition} today at {temperature} degrees.", "In {city} it is {condition} with {temperature} degrees."],
    instructions: ["Extract the city, temperature and condition as JSON.", "Return JSON with city, temperature and condition."],
    draw: (random) => ({ city: random.pick(CITIES), temperature: random.between(-10, 38), condition: random.pick(CONDITIONS) }),
  },
];

/** Fields stated in a sentence, extracted into a JSON object with the keys the instruction names. */
export function jsonExample(random: TaskRandom): TinyChatExample {
  const kind = random.pick(KINDS);
  const record = kind.draw(random);
  const sentence = random.int(kind.sentences.length);
  const instruction = random.pick(kind.instructions);
  const text = fill(kind.sentences[sentence]!, record);
  const layout = random.int(3);
  const prompt = layout === 0 ? `${instruction}\n${text}` : layout === 1 ? `${text}\n${instruction}` : `${instruction} Text: ${text}`;
  return {
    task: "json",
    key: `json:${kind.name}:${sentence}:${Object.values(record).join(":")}`,
    messages: [
      { role: "user", content: prompt },
      { role: "assistant", content: jsonText(record) },
    ],
    expected: { kind: "json", value: record },
  };
}

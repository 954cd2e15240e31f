/** The names, places and things the synthetic tasks draw from. */
import type { TaskRandom } from "./random.js";

export const CITIES = [
  "Paris",
  "Berlin",
  "Tokyo",
  "Cairo",
  "Lima",
  "Oslo",
  "Madrid",
  "Rome",
  "London",
  "Dublin",
  "Vienna",
  "Prague",
  "Warsaw",
  "Athens",
  "Lisbon",
  "Moscow",
  "Beijing",
  "Seoul",
  "Delhi",
  "Sydney",
  "Toronto",
  "Chicago",
  "Boston",
  "Denver",
  "Nairobi",
  "Lagos",
  "Istanbul",
  "Bangkok",
  "Jakarta",
  "Manila",
  "Santiago",
  "Bogota",
  "Havana",
  "Helsinki",
  "Stockholm",
  "Zurich",
] as const;

export const CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy", "foggy", "clear"] as const;

export const PEOPLE = [
  "Alice",
  "Bob",
  "Maria",
  "John",
  "Sara",
  "David",
  "Emma",
  "Liam",
  "Olivia",
  "Noah",
  "Ava",
  "Lucas",
  "Mia",
  "Ethan",
  "Zoe",
  "Omar",
  "Lena",
  "Ivan",
  "Yuki",
  "Carlos",
  "Priya",
  "Ahmed",
  "Nina",
  "Tom",
  "Anna",
  "Leo",
  "Grace",
  "Max",
  "Ruth",
  "Sam",
] as const;

export const ITEMS = ["lamp", "book", "chair", "phone", "bike", "watch", "kettle", "camera", "desk", "guitar", "jacket", "backpack", "mug", "clock"] as const;

export const CAPITALS: readonly (readonly [string, string])[] = [
  ["France", "Paris"],
  ["Germany", "Berlin"],
  ["Japan", "Tokyo"],
  ["Egypt", "Cairo"],
  ["Peru", "Lima"],
  ["Norway", "Oslo"],
  ["Spain", "Madrid"],
  ["Italy", "Rome"],
  ["England", "London"],
  ["Ireland", "Dublin"],
  ["Austria", "Vienna"],
  ["Greece", "Athens"],
  ["Portugal", "Lisbon"],
  ["Russia", "Moscow"],
  ["China", "Beijing"],
  ["Kenya", "Nairobi"],
  ["Thailand", "Bangkok"],
  ["Chile", "Santiago"],
  ["Cuba", "Havana"],
  ["Finland", "Helsinki"],
  ["Sweden", "Stockholm"],
  ["Poland", "Warsaw"],
  ["Canada", "Ottawa"],
  ["Australia", "Canberra"],
  ["India", "New Delhi"],
  ["Brazil", "Brasilia"],
];

export const OPPOSITES: readonly (readonly [string, string])[] = [
  ["hot", "cold"],
  ["big", "small"],
  ["fast", "slow"],
  ["up", "down"],
  ["light", "dark"],
  ["happy", "sad"],
  ["old", "new"],
  ["open", "closed"],
  ["early", "late"],
  ["full", "empty"],
  ["high", "low"],
  ["long", "short"],
  ["hard", "soft"],
  ["wet", "dry"],
  ["rich", "poor"],
  ["strong", "weak"],
  ["loud", "quiet"],
  ["thick", "thin"],
];

export const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] as const;

const NAME_ONSETS = ["b", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "ch", "sh", "th", "br", "tr", "kl"] as const;
const NAME_VOWELS = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ei", "ou"] as const;
const NAME_CODAS = ["", "", "", "n", "r", "l", "s", "m"] as const;

/**
 * A person's name: half the time a common one from `PEOPLE`, else one made of two random syllables
 * and an optional last consonant ("Kemin", "Tolai"), so a reply can only get it right by copying it
 * from the prompt. Two syllables, not three: a model this small miscopies longer made-up names
 * (a syllable dropped or repeated), and the task is copying, not spelling.
 */
export function personName(random: TaskRandom): string {
  if (random.chance(0.5)) return random.pick(PEOPLE);
  let name = "";
  for (let i = 0; i < 2; i++) name += random.pick(NAME_ONSETS) + random.pick(NAME_VOWELS);
  name += random.pick(NAME_CODAS);
  return name[0]!.toUpperCase() + name.slice(1);
}

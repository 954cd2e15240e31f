/** The names, places and things the synthetic tasks draw from. */
import { stableHash, type TaskRandom } from "./random.js";

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
  "Ana",
  "Sofia",
  "Hugo",
  "Elena",
  "Kenji",
  "Amara",
  "Diego",
  "Freya",
  "Jamal",
  "Ines",
  "Oscar",
  "Layla",
  "Felix",
  "Mira",
  "Pablo",
  "Hana",
  "Viktor",
  "Rosa",
  "Arjun",
  "Chen",
  "Kofi",
  "Lucia",
  "Marco",
  "Nora",
  "Tariq",
  "Wei",
  "Ada",
  "Boris",
  "Clara",
  "Dev",
] as const;

/** Real names the training data never holds: the build's name probe asks for them. */
export const UNSEEN_PEOPLE = [
  "Fatima",
  "Hiroshi",
  "Ingrid",
  "Mateo",
  "Aisha",
  "Dmitri",
  "Chloe",
  "Rafael",
  "Svetlana",
  "Kwame",
  "Mei",
  "Giulia",
  "Astrid",
  "Joaquin",
  "Nadia",
  "Sven",
  "Yasmin",
  "Bjorn",
  "Lorenzo",
  "Keiko",
  "Olga",
  "Thabo",
  "Zara",
  "Emil",
  "Beatriz",
  "Ravi",
  "Helga",
  "Jonas",
  "Imani",
  "Pedro",
  "Sakura",
  "Anil",
  "Greta",
  "Musa",
  "Elif",
  "Tomas",
  "Linnea",
  "Kai",
  "Rania",
  "Xavier",
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

const NAME_ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "y", "z", "ch", "sh", "th", "br", "dr", "fr", "gr", "kr", "tr", "st", "kl", "pl"] as const;
const NAME_VOWELS = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ei", "ou", "ia"] as const;
const NAME_CODAS = ["", "", "", "", "n", "r", "l", "s", "m", "k", "t", "nd", "x"] as const;
/** How many syllables a made-up name has: one to three, two most often. */
const NAME_SYLLABLES = [1, 2, 2, 2, 2, 3] as const;

const UNSEEN = new Set<string>(UNSEEN_PEOPLE);

/**
 * Made-up names the training data never holds (one in ten, by hash), so the build's name probe
 * can ask for names that are new in every task, not only in the example it appears in.
 */
export function isProbeOnlyName(name: string): boolean {
  return UNSEEN.has(name) || stableHash(`person:${name}`) % 10 === 0;
}

/** A made-up name of random syllables and an optional last consonant ("Kemin", "Trouvax", "Bo"). */
export function madeUpName(random: TaskRandom, syllables = random.pick(NAME_SYLLABLES)): string {
  let name = "";
  for (let i = 0; i < syllables; i++) name += random.pick(NAME_ONSETS) + random.pick(NAME_VOWELS);
  name += random.pick(NAME_CODAS);
  return name[0]!.toUpperCase() + name.slice(1);
}

/**
 * A person's name for training and the held-out tasks: a third of the time a common one from
 * `PEOPLE`, else a made-up one, so a reply can only get it right by copying it from the prompt.
 * Probe-only names are drawn again.
 */
export function personName(random: TaskRandom): string {
  if (random.chance(1 / 3)) return random.pick(PEOPLE);
  for (;;) {
    const name = madeUpName(random);
    if (!isProbeOnlyName(name)) return name;
  }
}

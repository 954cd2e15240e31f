import type { ChatMessage } from "../../train/trajectory.js";
import { fill, type TinyChatExample } from "../examples.js";
import type { TaskRandom } from "../random.js";
import { CAPITALS, OPPOSITES, personName, WEEKDAYS } from "../words.js";

/** Small talk: ways of saying one thing, the reply, and the word a reply must contain. */
const SMALL_TALK: readonly { inputs: string[]; reply: string; mentions: string }[] = [
  { inputs: ["Hello!", "Hi!", "Hello there.", "Hey!", "Hi there!", "Hello, assistant."], reply: "Hello! How can I help you today?", mentions: "hello" },
  { inputs: ["Good morning!", "Good morning.", "Morning!"], reply: "Good morning! How can I help you?", mentions: "morning" },
  { inputs: ["How are you?", "How are you doing?", "How is it going?"], reply: "I am fine, thank you. How can I help you?", mentions: "fine" },
  { inputs: ["Thank you!", "Thanks!", "Thanks a lot.", "Thank you very much."], reply: "You're welcome!", mentions: "welcome" },
  { inputs: ["Goodbye!", "Bye!", "See you later.", "Bye for now."], reply: "Goodbye! Have a nice day.", mentions: "goodbye" },
  { inputs: ["Who are you?", "What are you?", "What is your name?", "Tell me about yourself."], reply: "I am Tiny Chat, a small assistant trained with Flywheel.", mentions: "tiny chat" },
];

const CAPITAL_QUESTIONS = ["What is the capital of {country}?", "Which city is the capital of {country}?", "Name the capital of {country}.", "What city is {country}'s capital?", "Tell me the capital of {country}."];
const OPPOSITE_QUESTIONS = ["What is the opposite of {word}?", 'What is the opposite of "{word}"?', "Give me the opposite of {word}.", "What word means the opposite of {word}?"];
const WEEKDAY_QUESTIONS = ["What day comes after {day}?", "Which day follows {day}?", "What is the day after {day}?"];
export const NAME_INTRODUCTIONS = [
  "My name is {name}.",
  "Hi, I am {name}.",
  "Hello! I'm {name}.",
  "Call me {name}.",
  "Hello! My name is {name}.",
  "Hi there, I'm {name}.",
  "Hey, I'm {name}.",
  "I am {name}.",
  "My name's {name}.",
  "Hi! This is {name}.",
  "Good morning, I'm {name}.",
  "Hello, my name is {name}. Nice to meet you.",
];
const NAME_QUESTIONS = ["What is my name?", "Do you remember my name?", "What did I say my name was?", "What's my name?", "Can you tell me my name?", "Who am I?"];

interface Exchange {
  key: string;
  question: string;
  answer: string;
  mentions: string[];
}

function smallTalk(random: TaskRandom): Exchange {
  const topic = random.int(SMALL_TALK.length);
  const { inputs, reply, mentions } = SMALL_TALK[topic]!;
  const input = random.int(inputs.length);
  return { key: `talk:${topic}:${input}`, question: inputs[input]!, answer: reply, mentions: [mentions] };
}

function fact(random: TaskRandom): Exchange {
  const kind = random.int(3);
  if (kind === 0) {
    const [country, capital] = random.pick(CAPITALS);
    const template = random.int(CAPITAL_QUESTIONS.length);
    return { key: `capital:${template}:${country}`, question: fill(CAPITAL_QUESTIONS[template]!, { country }), answer: `The capital of ${country} is ${capital}.`, mentions: [capital] };
  }
  if (kind === 1) {
    const pair = random.pick(OPPOSITES);
    const [word, opposite] = random.chance(0.5) ? pair : [pair[1], pair[0]];
    const template = random.int(OPPOSITE_QUESTIONS.length);
    return { key: `opposite:${template}:${word}`, question: fill(OPPOSITE_QUESTIONS[template]!, { word }), answer: `The opposite of ${word} is ${opposite}.`, mentions: [opposite] };
  }
  const index = random.int(WEEKDAYS.length);
  const [day, next] = [WEEKDAYS[index]!, WEEKDAYS[(index + 1) % WEEKDAYS.length]!];
  const template = random.int(WEEKDAY_QUESTIONS.length);
  return { key: `weekday:${template}:${day}`, question: fill(WEEKDAY_QUESTIONS[template]!, { day }), answer: `${next} comes after ${day}.`, mentions: [next] };
}

/** Brief conversations: small talk, short facts, a fact after a greeting, and remembering the user's name. */
export function conversationExample(random: TaskRandom): TinyChatExample {
  // Three shapes in seven remember a name: copying one out of the prompt is the hard part.
  const shape = random.int(7);
  if (shape <= 2) {
    const exchange = shape === 0 ? smallTalk(random) : fact(random);
    return {
      task: "conversation",
      key: exchange.key,
      messages: [
        { role: "user", content: exchange.question },
        { role: "assistant", content: exchange.answer },
      ],
      expected: { kind: "contains", values: exchange.mentions },
    };
  }
  if (shape === 3) {
    const [first, second] = [smallTalk(random), fact(random)];
    const messages: ChatMessage[] = [
      { role: "user", content: first.question },
      { role: "assistant", content: first.answer },
      { role: "user", content: second.question },
      { role: "assistant", content: second.answer },
    ];
    return { task: "conversation", key: `${first.key}+${second.key}`, messages, expected: { kind: "contains", values: second.mentions } };
  }
  return nameExample(random, personName(random), random.pick(NAME_INTRODUCTIONS));
}

/** The user introduces themselves (`introduction` has a `{name}` slot), maybe asks something else, then asks for their name back. */
export function nameExample(random: TaskRandom, name: string, introduction: string): TinyChatExample {
  const question = random.int(NAME_QUESTIONS.length);
  const middle = random.chance(0.5) ? fact(random) : undefined;
  const messages: ChatMessage[] = [
    { role: "user", content: fill(introduction, { name }) },
    { role: "assistant", content: `Nice to meet you, ${name}! How can I help you?` },
    ...(middle
      ? [
          { role: "user", content: middle.question },
          { role: "assistant", content: middle.answer },
        ]
      : []),
    { role: "user", content: NAME_QUESTIONS[question]! },
    { role: "assistant", content: `Your name is ${name}.` },
  ];
  return { task: "conversation", key: `name:${introduction}:${question}:${name}:${middle?.key ?? ""}`, messages, expected: { kind: "contains", values: [name] } };
}

// The body read path, in process: `bun run scripts/bench-body.ts`. Times each step Parley takes
// on a received body (the JSON shape check, decoding and parsing, input validation) for a typical
// ~200-byte chat body and a 13 MB image data URL, beside the raw floor (`JSON.parse` of the
// decoded text), so a change to the path shows its cost per request. Prints medians of 15 rounds.
import { t } from 'elysia';
import { checkJsonShape } from '../src/http/check-json-shape';
import { compileInput, parseJsonBody } from '../src/http/body';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Step {
  fn: (arg: any) => unknown;
  /** Makes each call's argument, untimed. */
  setup?: () => unknown;
}

/**
 * Median nanoseconds per call of each step over 15 rounds of `n` calls, the steps taking turns
 * within each round so that the JIT's warm-up and the heap's state fall on all of them alike.
 */
function time(n: number, steps: Step[]): number[] {
  const runs: number[][] = steps.map(() => []);
  for (let r = 0; r < 16; r++) {
    steps.forEach((step, s) => {
      const args = step.setup ? Array.from({ length: n }, step.setup) : [];
      const t0 = Bun.nanoseconds();
      for (let i = 0; i < n; i++) step.fn(args[i]);
      if (r > 0) runs[s]!.push((Bun.nanoseconds() - t0) / n);
    });
  }
  return runs.map((r) => r.sort((a, b) => a - b)[7]!);
}

const fmt = (ns: number) => (ns < 10_000 ? `${ns.toFixed(0)} ns` : `${(ns / 1e6).toFixed(2)} ms`);

const chatInput = compileInput(
  t.Object({ message: t.String(), conversationId: t.Optional(t.String()), model: t.Optional(t.String({ minLength: 1, maxLength: 200 })) }),
);
const imageInput = compileInput(t.Object({ dataUrl: t.String() }));
const chat = { conversationId: '0192f3a4-5b6c-7d8e-9f01-23456789abcd', message: 'What is a good way to keep basil alive on a windowsill in winter?', model: 'gpt-small' };
const cases = [
  { name: 'chat body', bytes: encoder.encode(JSON.stringify(chat)), validate: chatInput, n: 20_000 },
  { name: 'chat body + 1 unknown field', bytes: encoder.encode(JSON.stringify({ ...chat, clientVersion: '1.2.0' })), validate: chatInput, n: 20_000 },
  { name: '13 MB data URL', bytes: encoder.encode(JSON.stringify({ dataUrl: `data:image/png;base64,${Buffer.alloc(10 * 1024 * 1024, 7).toString('base64')}` })), validate: imageInput, n: 5 },
];

console.log('| body | bytes | floor: decode + JSON.parse | shape check | parseJsonBody (check included) | validate |');
console.log('|---|---|---|---|---|---|');
for (const c of cases) {
  const [floor, shape, parse, validate] = time(c.n, [
    { fn: () => JSON.parse(decoder.decode(c.bytes)) },
    { fn: () => checkJsonShape(c.bytes) },
    { fn: () => parseJsonBody(c.bytes) },
    // Validation may strip fields from the value it is given: each call gets a fresh copy.
    { fn: (value) => c.validate(value), setup: () => parseJsonBody(c.bytes) },
  ]);
  console.log(`| ${c.name} | ${c.bytes.byteLength.toLocaleString('en')} | ${fmt(floor!)} | ${fmt(shape!)} | ${fmt(parse!)} | ${fmt(validate!)} |`);
}

/**
 * Cells of the chat-template matrix (template-matrix.ts) known to fail, each with why and what
 * will fix it. The matrix exits non-zero only for a failure not listed here, so CI stays
 * meaningful while issue 18's remaining items are open; a listed cell that passes is reported so
 * its entry can go. `template` is a file name in llama.cpp's `models/templates/` or `*`.
 */
import type { ShapeName } from './shapes';

export interface KnownFailure {
  template: string;
  shape: ShapeName | '*';
  reason: string;
  /** The issue item whose fix turns the cell green. */
  fixedBy: string;
}

const ALWAYS_THINKING =
  "The template always opens a thinking block (whatever --reasoning says) and the tiny model never closes it: everything it says is reasoning, so there is no answer. A real thinking model closes the block. Since item 6 Parley ends such a turn honestly, with an `error` (\"The model reached its length limit while still thinking…\" or \"The model only thought and wrote no answer…\"), not `done`: the matrix cell still fails, as it should";
const OUTPUT_FORMAT =
  "llama-server must parse the model's output in this template's own format (e.g. gpt-oss's channels) and the tiny model cannot write it; a real model of the family does. Not a Parley defect";
export const KNOWN_FAILURES: KnownFailure[] = [
  ...[
    'Apriel-1.6-15b-Thinker-fixed.jinja',
    'Cohere2MoE.jinja',
    'deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja',
    'Kimi-K3.jinja',
    'llama-cpp-deepseek-r1.jinja',
    'MiniMax-M2.jinja',
    'NVIDIA-Nemotron-Nano-v2.jinja',
    'StepFun3.5-Flash.jinja',
  ].map((template): KnownFailure => ({ template, shape: '*', reason: ALWAYS_THINKING, fixedBy: 'none with this model (since item 6 the ending is an honest error)' })),
  // command-r7b's template used to fail first for its size (a preamble that, with Parley's tools, outgrew the context); with
  // the context budget it fits, and what remains is its output format ("does not match the expected peg-native format").
  ...['CohereForAI-c4ai-command-r-plus-tool_use.jinja', 'CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja', 'meetkai-functionary-medium-v3.2.jinja', 'muse-glimmer.jinja', 'openai-gpt-oss-120b.jinja'].map(
    (template): KnownFailure => ({ template, shape: '*', reason: OUTPUT_FORMAT, fixedBy: 'none with this model' }),
  ),
  { template: 'deepseek-ai-DeepSeek-V3.2.jinja', shape: 'history tool', reason: OUTPUT_FORMAT, fixedBy: 'none with this model' },
];

export function knownFailure(template: string, shape: ShapeName): KnownFailure | undefined {
  return KNOWN_FAILURES.find((k) => (k.template === '*' || k.template === template) && (k.shape === '*' || k.shape === shape));
}

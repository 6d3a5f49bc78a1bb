import { afterAll, beforeEach } from 'bun:test';
import { startFakeOpenAI, textEvents } from '../fakes/openai';
import { startFakeSearxng } from '../fakes/searxng';

/**
 * The fake OpenAI server and the fake SearxNG for one test file: started once, stopped after its
 * last test, and before each test the model's requests forgotten and its answers back to "Fine.".
 */
export function fakeAiForFile() {
  const openai = startFakeOpenAI();
  const searxng = startFakeSearxng();
  afterAll(() => {
    openai.stop();
    searxng.stop();
  });
  beforeEach(() => {
    openai.requests.length = 0;
    openai.eventDelayMs = 0;
    openai.chatScript = () => ({ deltas: [{ content: 'Fine.' }] });
    openai.responsesScript = () => textEvents('Fine.');
  });
  return { openai, searxng };
}

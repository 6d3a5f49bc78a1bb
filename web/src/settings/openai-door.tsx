import { useRef } from 'preact/hooks';
import { useCopy } from './settings-shared';

/**
 * How to reach Parley from apps and libraries made for OpenAI's API (docs/openai-api.md): the base
 * URL to give them, on this same origin, and what to put as their API key. Says only what the
 * server's `/v1` does.
 */
export function OpenAiDoor() {
  const baseUrl = `${location.origin}/v1`;
  const box = useRef<HTMLInputElement>(null);
  const { copied, copy } = useCopy(box, 'the address');

  return (
    <div class="openai-door" role="group" aria-labelledby="openai-door-title">
      <h4 id="openai-door-title">Use Parley from apps made for OpenAI's API</h4>
      <p class="hint">
        Apps, editors and scripts that talk to OpenAI's API (the <code>openai</code> libraries, for one) can use this server's models instead: give them this base
        URL, and one of your API keys as their API key. They can list the models, chat (streamed or not, with their own tools), use the Responses API (in the
        background too, resuming a stream), and make embeddings when the server has an embeddings model.
      </p>
      <div class="fresh-key-row">
        <label class="visually-hidden" for="openai-base-url">
          Base URL for OpenAI-compatible apps
        </label>
        <input id="openai-base-url" ref={box} readOnly value={baseUrl} />
        <button type="button" onClick={copy} aria-label="Copy the base URL">
          Copy
        </button>
      </div>
      <p role="status" class="status">
        {copied}
      </p>
      <p class="hint">
        What they send is not kept as a conversation unless the request asks with <code>store: true</code>; then it shows in your conversations here.
      </p>
    </div>
  );
}

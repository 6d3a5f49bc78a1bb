import { CopyField } from './settings-shared';

/**
 * How to reach Parley from apps and libraries made for OpenAI's API (docs/openai-api.md): the base
 * URL to give them, on this same origin, and what to put as their API key. Says only what the
 * server's `/v1` does.
 */
export function OpenAiDoor() {
  const baseUrl = `${location.origin}/v1`;

  return (
    <div class="openai-door" role="group" aria-labelledby="openai-door-title">
      <h4 id="openai-door-title">Use Parley from apps made for OpenAI's API</h4>
      <p class="hint">
        Apps, editors and scripts that talk to OpenAI's API (the <code>openai</code> libraries, for one) can use this server's models instead: give them this base
        URL, and one of your API keys as their API key. They can list the models, chat (streamed or not, with their own tools), use the Responses API (in the
        background too, resuming a stream), and make embeddings when the server has an embeddings model.
      </p>
      <CopyField id="openai-base-url" label="Base URL for OpenAI-compatible apps" value={baseUrl} copyLabel="Copy the base URL" />
      <p class="hint">
        What they send is not kept as a conversation unless the request asks with <code>store: true</code>; then it shows in your conversations here.
      </p>
    </div>
  );
}

import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { onLinkClick } from '../shared/router';

/** An assistant as `assistants/list` gives it (docs/assistants.md), what the chat needs of it. */
export interface AssistantChoice {
  id: string;
  name: string;
  description: string;
  starters: string[];
  shared: boolean;
}

/** The assistants the user may pick (their own and the shared ones); none while the list has not come. */
export function useAssistants(): AssistantChoice[] {
  const [list, setList] = useState<AssistantChoice[]>([]);
  useEffect(() => {
    // Without the list the page still chats with Parley itself: nothing to tell the user.
    call<{ assistants: AssistantChoice[] }>('assistants/list').then((r) => setList(r.assistants), () => undefined);
  }, []);
  return list;
}

/**
 * Who answers: Parley itself or one of the user's assistants. A conversation keeps the assistant
 * it was started with (the server remembers it), so once it has one the page names it instead.
 */
export function AssistantPicker({ assistants, chosen, current, onChoose }: { assistants: AssistantChoice[]; chosen: string; current: string | null | undefined; onChoose(id: string): void }) {
  if (current) {
    const name = assistants.find((a) => a.id === current)?.name ?? 'an assistant';
    return <p class="assistant-current hint">Answering: {name}</p>;
  }
  const manage = (
    <a class="assistant-manage" href="/assistants" onClick={onLinkClick('/assistants')}>
      {assistants.length ? 'Manage assistants' : 'Make an assistant'}
    </a>
  );
  if (!assistants.length) return <p class="assistant-picker hint">{manage}</p>;
  return (
    <div class="assistant-picker">
      <label class="model-picker">
        <span>Assistant</span>
        <select value={chosen} onChange={(e) => onChoose(e.currentTarget.value)}>
          <option value="">Parley</option>
          {assistants.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
              {a.shared ? ' (shared)' : ''}
            </option>
          ))}
        </select>
      </label>
      {manage}
    </div>
  );
}

/** An empty chat with an assistant chosen: its description, and its starter prompts to send with one click. */
export function AssistantStarters({ assistant, onSend }: { assistant: AssistantChoice; onSend(text: string): void }) {
  return (
    <section class="assistant-starters" aria-label={`Start with ${assistant.name}`}>
      {assistant.description && <p class="hint">{assistant.description}</p>}
      {assistant.starters.length > 0 && (
        <ul>
          {assistant.starters.map((s) => (
            <li key={s}>
              <button type="button" onClick={() => onSend(s)}>
                {s}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

import { createContext } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ModelChoice } from './chat-models';
import { call } from '../shared/api';
import { onLinkClick } from '../shared/router';

/** An assistant as `assistants/list` gives it (docs/assistants.md), what the chat needs of it. */
export interface AssistantChoice {
  id: string;
  name: string;
  description: string;
  starters: string[];
  shared: boolean;
  /** Its model (a catalogue id); null: the server's default. */
  model: string | null;
  /** Where its avatar is served; null: none. */
  avatarUrl: string | null;
}

/** The assistants the user may pick (their own and the shared ones); undefined while the list has not come. */
export function useAssistants(): AssistantChoice[] | undefined {
  const [list, setList] = useState<AssistantChoice[]>();
  useEffect(() => {
    // Without the list the page still chats with Parley itself: nothing to tell the user.
    call<{ assistants: AssistantChoice[] }>('assistants/list').then((r) => setList(r.assistants), () => setList([]));
  }, []);
  return list;
}

/** The assistant answering the conversation on screen: its name and avatar head its answers. */
export const AnsweringAssistant = createContext<AssistantChoice | undefined>(undefined);

/** An assistant's avatar, decorative beside its name; nothing without one. */
export function AssistantAvatar({ assistant, size = 24 }: { assistant: AssistantChoice | undefined; size?: number }) {
  return assistant?.avatarUrl ? <img class="assistant-avatar" src={assistant.avatarUrl} alt="" width={size} height={size} /> : null;
}

/**
 * Who answers: Parley itself or one of the user's assistants. A conversation keeps the assistant
 * it was started with (the server remembers it), so once it has one the page names it instead.
 */
export function AssistantPicker({ assistants, chosen, current, onChoose }: { assistants: AssistantChoice[] | undefined; chosen: string; current: string | null | undefined; onChoose(id: string): void }) {
  if (!assistants) return null;
  if (current) {
    const a = assistants.find((x) => x.id === current);
    // One the user may not use (a shared one's tiers changed, or the owner's own in a conversation
    // shared with them): the server answers their turns as Parley itself.
    if (!a) return <p class="assistant-current hint">Answering: Parley (this conversation's assistant is not available to you)</p>;
    return (
      <p class="assistant-current hint">
        <AssistantAvatar assistant={a} />
        Answering: {a.name}
      </p>
    );
  }
  const manage = (
    <a class="assistant-manage" href="/assistants" onClick={onLinkClick('/assistants')}>
      {assistants.length ? 'Manage assistants' : 'Make an assistant'}
    </a>
  );
  if (!assistants.length) return <p class="assistant-picker hint">{manage}</p>;
  return (
    <div class="assistant-picker">
      <AssistantAvatar assistant={assistants.find((a) => a.id === chosen)} />
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

interface Models {
  choices: ModelChoice[];
  model: string | undefined;
  choose(id: string): void;
}

/**
 * The model a turn names while an assistant answers (docs/web.md, "Assistants"): none, so that
 * the assistant's own model answers, unless the user picks one in the picker on this page (then
 * that one, for this conversation as long as the page is open). The picker shows the assistant's
 * model meanwhile, when it is one of the choices.
 */
export function useModelBeside(models: Models, assistant: AssistantChoice | undefined): { picker: Models; model: string | undefined } {
  const [picked, setPicked] = useState(false);
  const choose = (id: string) => {
    models.choose(id);
    setPicked(true);
  };
  if (!assistant || picked) return { picker: { ...models, choose }, model: models.model };
  const own = assistant.model && models.choices.some((c) => c.id === assistant.model) ? assistant.model : models.model;
  return { picker: { ...models, model: own, choose }, model: undefined };
}

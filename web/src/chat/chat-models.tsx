import { createContext } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';

/** The model the user picked last, in this browser: the next chats start with it. */
const CHOSEN_KEY = 'parley.model';

interface Model {
  id: string;
  /** What to show (the admin may rename a model); servers before connections sent only `id`. */
  name?: string;
  connection?: string;
  /** False when its server did not answer lately: shown, but not chosen. */
  available?: boolean;
}

interface ModelList {
  models: Model[];
  default: string;
}

export interface ModelChoice {
  id: string;
  label: string;
  available: boolean;
}

/**
 * The models the server offers (`chat/listModels`) and the one chosen. `model` is what to send
 * with a turn: nothing while the server offers a single model (it uses its own), otherwise the
 * choice, or the server's default when the remembered choice is no longer offered.
 */
export function useModels() {
  const [list, setList] = useState<ModelList>();
  const [chosen, setChosen] = useState(() => localStorage.getItem(CHOSEN_KEY) ?? undefined);
  useEffect(() => {
    // Without the list the page still chats, with the server's model: nothing to tell the user.
    call<ModelList>('chat/listModels').then(setList, () => undefined);
  }, []);
  const models = list?.models ?? [];
  const ids = models.map((m) => m.id);
  const several = ids.length > 1;
  // A default the list does not show (hidden from this user's tier): the server picks, as with one model.
  const model = several ? (chosen && ids.includes(chosen) ? chosen : ids.includes(list!.default) ? list!.default : undefined) : undefined;
  const choose = (id: string) => {
    localStorage.setItem(CHOSEN_KEY, id);
    setChosen(id);
  };
  // Names alone while one server serves them all; with several, which one serves each.
  const servers = new Set(models.map((m) => m.connection)).size;
  const choices: ModelChoice[] = models.map((m) => ({
    id: m.id,
    label: `${m.name ?? m.id}${servers > 1 && m.connection ? ` · ${m.connection}` : ''}${m.available === false ? ' (unavailable)' : ''}`,
    available: m.available !== false,
  }));
  // An answer names its model by catalogue id (`connection/model`): shown as the picker shows it.
  const names = new Map(models.map((m) => [m.id, `${m.name ?? m.id}${servers > 1 && m.connection ? ` · ${m.connection}` : ''}`]));
  return { choices: several ? choices : [], model, choose, names };
}

/** Catalogue id → the name people see; an id no longer offered is shown as it is. */
export const ModelNames = createContext<Map<string, string>>(new Map());

export function ModelPicker({ choices, model, onChoose }: { choices: ModelChoice[]; model: string | undefined; onChoose(id: string): void }) {
  if (choices.length < 2) return null;
  const down = choices.find((c) => c.id === model)?.available === false;
  // An unavailable model is greyed (disabled) unless it is the one chosen, which then says why answers may fail.
  return (
    <label class="model-picker">
      <span>Model</span>
      <select value={model} onChange={(e) => onChoose(e.currentTarget.value)} aria-describedby={down ? 'model-down' : undefined}>
        {choices.map((c) => (
          <option key={c.id} value={c.id} disabled={!c.available && c.id !== model}>
            {c.label}
          </option>
        ))}
      </select>
      {down && (
        <span id="model-down" class="hint">
          Its server did not answer lately: choose another if the answer fails.
        </span>
      )}
    </label>
  );
}

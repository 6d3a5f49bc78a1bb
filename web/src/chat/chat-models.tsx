import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';

/** The model the user picked last, in this browser: the next chats start with it. */
const CHOSEN_KEY = 'parley.model';

interface ModelList {
  models: { id: string }[];
  default: string;
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
  const ids = list?.models.map((m) => m.id) ?? [];
  const several = ids.length > 1;
  const model = several ? (chosen && ids.includes(chosen) ? chosen : list!.default) : undefined;
  const choose = (id: string) => {
    localStorage.setItem(CHOSEN_KEY, id);
    setChosen(id);
  };
  return { ids: several ? ids : [], model, choose };
}

export function ModelPicker({ ids, model, onChoose }: { ids: string[]; model: string | undefined; onChoose(id: string): void }) {
  if (ids.length < 2) return null;
  return (
    <label class="model-picker">
      <span>Model</span>
      <select value={model} onChange={(e) => onChoose(e.currentTarget.value)}>
        {ids.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
    </label>
  );
}

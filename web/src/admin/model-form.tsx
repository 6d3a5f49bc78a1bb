import { useState } from 'preact/hooks';
import { call } from '../shared/api';
import { messageOf, Note } from '../shared/note';
import { FormButtons } from '../shared/form-buttons';
import { TIERS, type ModelSetting } from './connections-api';

type Flag = 'vision' | 'tools' | 'thinking';
const FLAGS: [Flag, string][] = [
  ['vision', 'Sees images'],
  ['tools', 'Uses tools'],
  ['thinking', 'Thinks before answering'],
];
const yesNo = (v: boolean) => (v ? 'yes' : 'no');
/** A select's value for an override: `detected`, `yes` or `no`. */
const choiceOf = (v: boolean | null) => (v === null ? 'detected' : yesNo(v));
const overrideOf = (choice: string) => (choice === 'detected' ? null : choice === 'yes');

/**
 * One model's settings (admin/setModelSettings): its name, whether it is listed, what it can do
 * (each as detected or the admin's word), and which tiers may use it.
 */
export function ModelForm({ model, onSaved, onCancel }: { model: ModelSetting; onSaved(m: ModelSetting): void; onCancel(): void }) {
  const [name, setName] = useState(model.name === model.model ? '' : model.name);
  const [hidden, setHidden] = useState(model.hidden);
  const [flags, setFlags] = useState<Record<Flag, string>>({ vision: choiceOf(model.overrides.vision), tools: choiceOf(model.overrides.tools), thinking: choiceOf(model.overrides.thinking) });
  const [context, setContext] = useState(model.overrides.contextTokens === null ? '' : String(model.overrides.contextTokens));
  const [everyTier, setEveryTier] = useState(model.tiers === null);
  const [tiers, setTiers] = useState<string[]>(model.tiers ?? []);
  const [error, setError] = useState<string>();
  const allTiers = [...new Set([...TIERS, ...(model.tiers ?? [])])];

  const save = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    try {
      const r = await call<{ model: ModelSetting }>('admin/setModelSettings', {
        id: model.id,
        name: name.trim() || null,
        hidden,
        capabilities: { vision: overrideOf(flags.vision), tools: overrideOf(flags.tools), thinking: overrideOf(flags.thinking), contextTokens: context.trim() ? Number(context) : null },
        tiers: everyTier ? null : tiers,
      });
      onSaved(r.model);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const d = model.detected;
  return (
    <form class="admin-manage admin-form" onSubmit={save} aria-labelledby="model-form-title">
      <h4 id="model-form-title">
        Model <code>{model.id}</code>
      </h4>
      <div class="admin-fields">
        <label>
          Display name
          <input value={name} maxLength={200} placeholder={model.model} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={hidden} onChange={(e) => setHidden(e.currentTarget.checked)} /> Hidden (not listed, and refused when named)
        </label>
      </div>
      <fieldset class="admin-fields">
        <legend>What it can do</legend>
        {FLAGS.map(([flag, label]) => (
          <label key={flag}>
            {label}
            <select value={flags[flag]} onChange={(e) => setFlags({ ...flags, [flag]: e.currentTarget.value })}>
              <option value="detected">As detected ({yesNo(d[flag])})</option>
              <option value="yes">Yes</option>
              <option value="no">No</option>
            </select>
          </label>
        ))}
        <label>
          Context window (tokens)
          <input type="number" min={1} step={1} value={context} placeholder={d.contextTokens ? `As detected (${d.contextTokens})` : 'As detected (unknown)'} onInput={(e) => setContext(e.currentTarget.value)} />
        </label>
      </fieldset>
      <fieldset class="admin-fields">
        <legend>Who may use it</legend>
        <label class="check">
          <input type="checkbox" checked={everyTier} onChange={(e) => setEveryTier(e.currentTarget.checked)} /> Every subscription tier
        </label>
        {!everyTier &&
          allTiers.map((t) => (
            <label key={t} class="check">
              <input type="checkbox" checked={tiers.includes(t)} onChange={(e) => setTiers(e.currentTarget.checked ? [...tiers, t] : tiers.filter((x) => x !== t))} /> {t}
            </label>
          ))}
        {!everyTier && !tiers.length && <p class="hint">With no tier ticked, no user may use it.</p>}
      </fieldset>
      <FormButtons submit="Save model" onCancel={onCancel} />
      <Note error={error} />
    </form>
  );
}

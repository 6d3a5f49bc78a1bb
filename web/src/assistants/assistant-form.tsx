import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { FormButtons } from '../shared/form-buttons';
import { TOOL_SOURCES, type Assistant } from './assistant-types';
import { AssistantResourcesFields, resourceChoiceOf } from './assistant-resources-fields';

interface ModelList {
  models: { id: string; name?: string }[];
}

/** The fields of `assistants/create` and `assistants/update` the form edits. */
export type AssistantInput = Record<string, unknown>;
/** What to do with the avatar once the assistant is saved: a new image (a data URL), its removal, or nothing. */
export type AvatarChange = { dataUrl: string } | 'remove' | undefined;

const MAX_STARTERS = 4;
const known = new Set(TOOL_SOURCES.map((s) => s.id));
const numberOrNull = (text: string) => (text.trim() === '' ? null : Number(text));
const listOf = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * Every field of an assistant: name, description, instructions, model, tools, starters; an admin
 * also says whether a new one is shared, and with whom. `assistant` absent: a new one.
 */
export function AssistantForm({ assistant, isAdmin, onSave, onCancel }: { assistant?: Assistant; isAdmin: boolean; onSave(input: AssistantInput, avatar: AvatarChange): Promise<void>; onCancel(): void }) {
  const [name, setName] = useState(assistant?.name ?? '');
  const [description, setDescription] = useState(assistant?.description ?? '');
  const [instructions, setInstructions] = useState(assistant?.instructions ?? '');
  const [model, setModel] = useState(assistant?.model ?? '');
  const [allTools, setAllTools] = useState(assistant ? assistant.tools === null : true);
  const [sources, setSources] = useState(new Set((assistant?.tools ?? []).filter((x) => known.has(x))));
  // MCP servers' sources and single tools by name: kept as typed, the API checks nothing more.
  const [otherTools, setOtherTools] = useState((assistant?.tools ?? []).filter((x) => !known.has(x)).join(', '));
  const [starters, setStarters] = useState(() => [...(assistant?.starters ?? []), ...Array(MAX_STARTERS).fill('')].slice(0, MAX_STARTERS));
  const [shared, setShared] = useState(assistant?.shared ?? false);
  const [visibility, setVisibility] = useState<'everyone' | 'tiers'>(assistant?.visibility === 'tiers' ? 'tiers' : 'everyone');
  const [tiers, setTiers] = useState(assistant?.tiers.join(', ') ?? '');
  const [temperature, setTemperature] = useState(String(assistant?.parameters.temperature ?? ''));
  const [topP, setTopP] = useState(String(assistant?.parameters.topP ?? ''));
  const [maxOutputTokens, setMaxOutputTokens] = useState(String(assistant?.parameters.maxOutputTokens ?? ''));
  const [avatar, setAvatar] = useState<AvatarChange>();
  const [resources, setResources] = useState(resourceChoiceOf(assistant));
  const [models, setModels] = useState<ModelList['models']>([]);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    // Without the list the model stays the server's default (or what it was): nothing to tell.
    call<ModelList>('chat/listModels').then((r) => setModels(r.models), () => undefined);
  }, []);
  const toggle = (id: string, on: boolean) => {
    const next = new Set(sources);
    if (on) next.add(id);
    else next.delete(id);
    setSources(next);
  };
  const pickAvatar = (input: HTMLInputElement) => {
    const file = input.files?.[0];
    if (!file) return;
    const reader = new FileReader();
    reader.onload = () => setAvatar({ dataUrl: String(reader.result) });
    reader.readAsDataURL(file);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      await onSave({
        name,
        description,
        instructions,
        model: model || null,
        tools: allTools ? null : [...sources, ...listOf(otherTools)],
        starters: starters.map((s) => s.trim()).filter(Boolean),
        parameters: { temperature: numberOrNull(temperature), topP: numberOrNull(topP), maxOutputTokens: numberOrNull(maxOutputTokens) },
        ...resources,
        ...(shared ? { visibility, tiers: visibility === 'tiers' ? listOf(tiers) : [] } : {}),
        ...(!assistant && shared ? { shared: true } : {}),
      }, avatar);
    } finally {
      setBusy(false);
    }
  };
  const title = assistant ? `Edit ${assistant.name}` : 'New assistant';
  // A model no longer listed (or a list that did not come) still shows, so saving keeps it.
  const modelChoices = model && !models.some((m) => m.id === model) ? [...models, { id: model }] : models;

  return (
    <form class="assistant-form" onSubmit={submit} aria-label={title}>
      <h3>{title}</h3>
      <label>
        Name
        {/* The form opens on the user's click: its first field takes the focus, as a dialog's would. */}
        <input required maxLength={100} value={name} autoFocus onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Description <span class="hint">(shown on an empty chat with it)</span>
        <input maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Instructions
        <textarea rows={6} maxLength={20_000} value={instructions} onInput={(e) => setInstructions(e.currentTarget.value)} />
      </label>
      <label>
        Model
        <select value={model} onChange={(e) => setModel(e.currentTarget.value)}>
          <option value="">The server's default</option>
          {modelChoices.map((m) => (
            <option key={m.id} value={m.id}>
              {m.name ?? m.id}
            </option>
          ))}
        </select>
      </label>
      <fieldset>
        <legend>Avatar</legend>
        {avatar !== 'remove' && (avatar ? <img class="assistant-avatar" src={avatar.dataUrl} alt="The new avatar" width={64} height={64} /> : assistant?.avatarUrl && <img class="assistant-avatar" src={assistant.avatarUrl} alt="The avatar" width={64} height={64} />)}
        <label>
          An image <span class="hint">(made a small square)</span>
          <input type="file" accept="image/*" onChange={(e) => pickAvatar(e.currentTarget)} />
        </label>
        {(avatar && avatar !== 'remove') || (assistant?.avatarUrl && avatar !== 'remove') ? (
          <button type="button" onClick={() => setAvatar(assistant?.avatarUrl ? 'remove' : undefined)}>
            Remove the avatar
          </button>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>Parameters</legend>
        <p class="hint">Empty: the model's default.</p>
        <label>
          Temperature <span class="hint">(0–2: lower is steadier, higher more varied)</span>
          <input type="number" min={0} max={2} step={0.05} value={temperature} onInput={(e) => setTemperature(e.currentTarget.value)} />
        </label>
        <label>
          Top P <span class="hint">(0–1)</span>
          <input type="number" min={0} max={1} step={0.01} value={topP} onInput={(e) => setTopP(e.currentTarget.value)} />
        </label>
        <label>
          Longest answer <span class="hint">(tokens)</span>
          <input type="number" min={1} max={1000000} step={1} value={maxOutputTokens} onInput={(e) => setMaxOutputTokens(e.currentTarget.value)} />
        </label>
      </fieldset>
      <fieldset>
        <legend>Tools</legend>
        <label class="check">
          <input type="checkbox" checked={allTools} onChange={(e) => setAllTools(e.currentTarget.checked)} />
          Every tool the server allows
        </label>
        {!allTools && (
          <>
            {TOOL_SOURCES.map((s) => (
              <label class="check" key={s.id}>
                <input type="checkbox" checked={sources.has(s.id)} onChange={(e) => toggle(s.id, e.currentTarget.checked)} />
                {s.label}
              </label>
            ))}
            <label>
              Other tools <span class="hint">(MCP servers or tool names, separated by commas)</span>
              <input value={otherTools} onInput={(e) => setOtherTools(e.currentTarget.value)} />
            </label>
          </>
        )}
      </fieldset>
      <AssistantResourcesFields value={resources} onChange={setResources} shared={shared} />
      <fieldset>
        <legend>Starter prompts</legend>
        {starters.map((s, i) => (
          <label key={i}>
            Starter {i + 1}
            <input maxLength={500} value={s} onInput={(e) => setStarters(starters.map((x, j) => (j === i ? e.currentTarget.value : x)))} />
          </label>
        ))}
      </fieldset>
      {isAdmin && (
        <fieldset>
          <legend>Sharing</legend>
          {!assistant && (
            <label class="check">
              <input type="checkbox" checked={shared} onChange={(e) => setShared(e.currentTarget.checked)} />
              Shared with other users
            </label>
          )}
          {assistant && !shared && <p class="hint">Your own: only you see it.</p>}
          {shared && (
            <>
              <label>
                Who may use it
                <select value={visibility} onChange={(e) => setVisibility(e.currentTarget.value as 'everyone' | 'tiers')}>
                  <option value="everyone">Everyone</option>
                  <option value="tiers">Some subscription tiers</option>
                </select>
              </label>
              {visibility === 'tiers' && (
                <label>
                  Tiers <span class="hint">(separated by commas)</span>
                  <input value={tiers} onInput={(e) => setTiers(e.currentTarget.value)} placeholder="PRO, TEAM" />
                </label>
              )}
            </>
          )}
        </fieldset>
      )}
      <FormButtons submit={assistant ? 'Save' : 'Create'} onCancel={onCancel} busy={busy} />
    </form>
  );
}

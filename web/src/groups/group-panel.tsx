import { useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';
import type { GroupChat } from './group-stream';
import { useModels } from '../chat/chat-models';
import type { AssistantChoice } from '../chat/assistant-picker';

export interface Member {
  id: string;
  name: string;
  joinedAt: string;
  isCreator: boolean;
}

const said = (err: unknown, fallback: string) => (err instanceof ApiError ? err.message : fallback);

/** The members, an invite link to share, and leaving or deleting the group. */
export function GroupPanel(props: {
  group: GroupChat;
  members: Member[];
  me: string | undefined;
  /** The shared assistants the user may use: the creator picks one for @ai among them. */
  assistants: AssistantChoice[];
  onLeft(): void;
  onGroup(group: GroupChat): void;
  onError(message: string): void;
}) {
  const { group, members, me, onLeft, onError } = props;
  const creator = group.creatorId === me;
  const leave = async () => {
    if (!confirm(`Leave "${group.name}"? You need a new invite to come back.`)) return;
    await call('groupChat/leaveGroup', { groupChatId: group.id }).then(onLeft, (err) => onError(said(err, 'You could not leave the group.')));
  };
  const remove = async () => {
    if (!confirm(`Delete "${group.name}" for everyone? Its messages are deleted too.`)) return;
    await call('groupChat/deleteGroupChat', { groupChatId: group.id }).then(onLeft, (err) => onError(said(err, 'The group could not be deleted.')));
  };
  return (
    <>
      <section aria-labelledby="members-title">
        <h3 id="members-title">Members ({members.length})</h3>
        <ul class="member-list">
          {members.map((m) => (
            <li key={m.id}>
              {m.name || 'Unnamed member'}
              {m.id === me && <span class="hint"> (you)</span>}
              {m.isCreator && <span class="group-badge">creator</span>}
            </li>
          ))}
        </ul>
      </section>
      <Invite groupChatId={group.id} onError={onError} />
      {creator ? (
        <AssistantSwitch group={group} assistants={props.assistants} onGroup={props.onGroup} onError={onError} />
      ) : (
        <GroupAssistantNote group={group} assistants={props.assistants} />
      )}
      <section aria-labelledby="leave-title">
        <h3 id="leave-title">{creator ? 'Delete the group' : 'Leave the group'}</h3>
        {creator ? (
          <>
            <p class="hint">You created this group: you can delete it for everyone, not leave it.</p>
            <button type="button" class="danger" onClick={remove}>
              Delete group
            </button>
          </>
        ) : (
          <button type="button" onClick={leave}>
            Leave group
          </button>
        )}
      </section>
    </>
  );
}

/** An invite link anyone may use until it expires: the full address, ready to copy. */
function Invite({ groupChatId, onError }: { groupChatId: string; onError(message: string): void }) {
  const [invite, setInvite] = useState<{ url: string; expiresAt: string }>();
  const [copied, setCopied] = useState('');
  const make = () =>
    call<{ code: string; expiresAt: string }>('groupChat/createInvite', { groupChatId }).then(
      (r) => (setInvite({ url: `${location.origin}/join/${encodeURIComponent(r.code)}`, expiresAt: r.expiresAt }), setCopied('')),
      (err) => onError(said(err, 'The invite link could not be made.')),
    );
  const copy = async () => {
    if (!invite) return;
    try {
      await navigator.clipboard.writeText(invite.url);
      setCopied('Copied.');
    } catch {
      // No clipboard access (an insecure origin, a refused permission): select it for the user to copy.
      (document.getElementById('invite-link') as HTMLInputElement | null)?.select();
      setCopied('Press Ctrl+C (or ⌘C) to copy the selected link.');
    }
  };
  return (
    <section aria-labelledby="invite-title">
      <h3 id="invite-title">Invite</h3>
      {invite ? (
        <div class="invite">
          <label for="invite-link">Invite link</label>
          <div class="invite-row">
            <input id="invite-link" readOnly value={invite.url} onFocus={(e) => e.currentTarget.select()} />
            <button type="button" onClick={copy}>
              Copy
            </button>
          </div>
          <p class="hint">Anyone with this link can join until {new Date(invite.expiresAt).toLocaleString()}.</p>
          <p role="status" class="hint">
            {copied}
          </p>
        </div>
      ) : (
        <p class="hint">Make a link to send to the people you want in the group.</p>
      )}
      <button type="button" onClick={make}>
        {invite ? 'Make a new invite link' : 'Make an invite link'}
      </button>
    </section>
  );
}

/** The name of the group's assistant for @ai, as far as the user's list knows it. */
const assistantName = (group: GroupChat, assistants: AssistantChoice[]) => (group.assistantId ? (assistants.find((a) => a.id === group.assistantId)?.name ?? 'a shared assistant') : undefined);

/** A member who did not create the group sees who answers @ai. */
function GroupAssistantNote({ group, assistants }: { group: GroupChat; assistants: AssistantChoice[] }) {
  const name = assistantName(group, assistants);
  if (!group.intelligentResponses) return null;
  return (
    <section aria-labelledby="assistant-title">
      <h3 id="assistant-title">Assistant</h3>
      <p class="hint">@ai is answered by {name ?? 'Parley'}.</p>
    </section>
  );
}

/** The creator decides whether the assistant answers messages that mention it, who answers @ai, and with which model. */
function AssistantSwitch({ group, assistants, onGroup, onError }: { group: GroupChat; assistants: AssistantChoice[]; onGroup(group: GroupChat): void; onError(message: string): void }) {
  const { choices } = useModels();
  const pick = (assistantId: string) =>
    call<GroupChat>('groupChat/setAssistant', { groupChatId: group.id, assistantId: assistantId || null }).then(onGroup, (err) => onError(said(err, 'The assistant could not be changed.')));
  // One chosen earlier that the list no longer has (no longer shared with the creator): named, so they see why Parley answers.
  const goneAssistant = group.assistantId && !assistants.some((a) => a.id === group.assistantId) ? group.assistantId : undefined;
  const change = (enabled: boolean) =>
    call<GroupChat>('groupChat/setIntelligentResponses', { groupChatId: group.id, enabled }).then(onGroup, (err) => onError(said(err, 'The setting could not be changed.')));
  const choose = (model: string) =>
    call<GroupChat>('groupChat/setModel', { groupChatId: group.id, model: model || null }).then(onGroup, (err) => onError(said(err, 'The model could not be changed.')));
  // A model chosen earlier that the list no longer shows: still named, so the creator sees why the default answers.
  const gone = group.model && !choices.some((c) => c.id === group.model) ? group.model : undefined;
  return (
    <section aria-labelledby="assistant-title">
      <h3 id="assistant-title">Assistant</h3>
      <label class="check">
        <input type="checkbox" checked={group.intelligentResponses} onChange={(e) => void change(e.currentTarget.checked)} />
        Answer messages that mention @ai
      </label>
      {(assistants.length > 0 || goneAssistant) && (
        <label class="group-model">
          <span>Answers @ai</span>
          <select value={group.assistantId ?? ''} onChange={(e) => void pick(e.currentTarget.value)}>
            <option value="">Parley</option>
            {assistants.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
            {goneAssistant && <option value={goneAssistant}>An assistant no longer shared with you (Parley answers)</option>}
          </select>
        </label>
      )}
      {choices.length > 0 && (
        <label class="group-model">
          <span>Model</span>
          <select value={group.model ?? ''} onChange={(e) => void choose(e.currentTarget.value)}>
            <option value="">The server's default</option>
            {choices.map((c) => (
              <option key={c.id} value={c.id} disabled={!c.available && c.id !== group.model}>
                {c.label}
              </option>
            ))}
            {gone && <option value={gone}>{gone} (no longer offered: the default answers)</option>}
          </select>
        </label>
      )}
    </section>
  );
}

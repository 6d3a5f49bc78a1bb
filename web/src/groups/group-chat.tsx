import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, call, type User } from '../shared/api';
import { navigate } from '../shared/router';
import { followGroup, type GroupChat, type GroupEvent, type GroupMessage } from './group-stream';
import { GroupComposer, MessageLog, type Pending } from './group-messages';
import { GroupPanel, type Member } from './group-panel';
import { useAssistants } from '../chat/assistant-picker';

/** Messages already on screen keep their place; ones not seen yet are added after them (one per id). */
const mergeMessages = (shown: GroupMessage[], loaded: GroupMessage[]) => {
  const known = new Set(loaded.map((m) => m.id));
  return [...loaded, ...shown.filter((m) => !known.has(m.id))];
};
const addMessage = (shown: GroupMessage[], m: GroupMessage) => (shown.some((s) => s.id === m.id) ? shown : [...shown, m]);

const PAGE = 100;
const NOT_MEMBER = 'This group does not exist, or you are not one of its members.';

/** One group chat: its messages live, the composer, and the members panel. */
export function Group({ id }: { id: string }) {
  const [group, setGroup] = useState<GroupChat>();
  const [me, setMe] = useState<string>();
  const [members, setMembers] = useState<Member[]>([]);
  const [messages, setMessages] = useState<GroupMessage[]>([]);
  const [pending, setPending] = useState<Pending[]>([]);
  const [connection, setConnection] = useState<'live' | 'reconnecting'>('live');
  const [ended, setEnded] = useState<string>();
  const [error, setError] = useState<string>();
  const [panelOpen, setPanelOpen] = useState(false);
  // Only shared assistants answer in a group (docs/groups.md): the others are their owner's alone.
  const shared = (useAssistants() ?? []).filter((a) => a.shared);
  // One per view: leaving the page stops following the group.
  const following = useRef(new AbortController());

  const loadMembers = () => call<{ members: Member[] }>('groupChat/listMembers', { groupChatId: id }).then((r) => setMembers(r.members));
  const [hasMore, setHasMore] = useState(false);
  const loadMessages = () =>
    call<{ messages: GroupMessage[]; hasMore: boolean }>('groupChat/listMessages', { groupChatId: id, limit: PAGE }).then((r) => {
      setMessages((shown) => mergeMessages(shown, r.messages));
      setHasMore(r.hasMore);
    });
  const loadOlder = () =>
    call<{ messages: GroupMessage[]; hasMore: boolean }>('groupChat/listMessages', { groupChatId: id, limit: PAGE, before: messages[0]?.id }).then(
      (r) => (setMessages((shown) => [...r.messages.filter((m) => !shown.some((s) => s.id === m.id)), ...shown]), setHasMore(r.hasMore)),
      (err) => setError(err instanceof ApiError ? err.message : 'The older messages could not be loaded.'),
    );
  const fail = (err: unknown) => setEnded(err instanceof ApiError && (err.status === 403 || err.status === 404) ? NOT_MEMBER : 'The group could not be loaded. Reload the page to try again.');

  const apply = (event: GroupEvent) => {
    switch (event.type) {
      case 'message.created': {
        const message = event.message as GroupMessage;
        setMessages((shown) => addMessage(shown, message));
        if (event.replyTo) setPending((p) => p.filter((a) => a.replyTo !== event.replyTo));
        break;
      }
      case 'assistant.started': {
        const name = typeof event.name === 'string' ? event.name : undefined;
        const assistantId = typeof event.assistantId === 'string' ? event.assistantId : undefined;
        setPending((p) => (p.some((a) => a.replyTo === event.replyTo) ? p : [...p, { replyTo: String(event.replyTo), text: '', name, assistantId }]));
        break;
      }
      case 'assistant.text.delta':
        setPending((p) => {
          const known = p.some((a) => a.replyTo === event.replyTo);
          const base = known ? p : [...p, { replyTo: String(event.replyTo), text: '' }];
          return base.map((a) => (a.replyTo === event.replyTo ? { ...a, text: a.text + String(event.delta) } : a));
        });
        break;
      case 'assistant.failed':
        setPending((p) => [...p.filter((a) => a.replyTo !== event.replyTo), { replyTo: String(event.replyTo), text: '', failed: String(event.message) }]);
        break;
      case 'member.joined':
      case 'member.left':
        void loadMembers().catch(() => undefined);
        break;
      case 'group.updated':
        setGroup(event.groupChat as GroupChat);
        break;
      case 'stream.reset':
        // The server could not replay everything missed: load the messages again, and drop the
        // answers being written (their missed deltas are gone; message.created brings them whole).
        setPending([]);
        void loadMessages().catch(() => undefined);
        break;
    }
  };

  useEffect(() => {
    const signal = following.current.signal;
    Promise.all([
      call<{ user: User }>('auth/getSession').then((s) => setMe(s.user.id)),
      call<{ groupChats: GroupChat[] }>('groupChat/listGroupChats').then((r) => {
        const found = r.groupChats.find((g) => g.id === id);
        if (!found) throw new ApiError(404, 'NOT_FOUND', NOT_MEMBER);
        setGroup(found);
      }),
      loadMembers(),
    ]).catch(fail);
    void followGroup(
      id,
      {
        // Subscribed first, then loaded: a message sent in between arrives by the stream, and is shown once.
        onOpen: (resumed) => void (resumed ? undefined : loadMessages().catch(fail)),
        onEvent: apply,
        onConnection: setConnection,
        onEnd: setEnded,
      },
      signal,
    );
    return () => following.current.abort();
  }, [id]);

  const send = (message: string) =>
    call<GroupMessage>('groupChat/sendGroupMessage', { groupChatId: id, message }).then(
      (m) => (setMessages((shown) => addMessage(shown, m)), setError(undefined), true),
      (err) => (setError(err instanceof ApiError ? err.message : 'The message could not be sent. Check the connection and try again.'), false),
    );

  if (ended && !group) return <p role="alert" class="page-message">{ended}</p>;
  return (
    <section class="group-page" aria-labelledby="group-title">
      <header class="group-head">
        <h2 id="group-title">{group?.name ?? 'Group'}</h2>
        <button type="button" class="panel-toggle" aria-expanded={panelOpen} aria-controls="group-panel" onClick={() => setPanelOpen(!panelOpen)}>
          Members ({members.length}) and invite
        </button>
      </header>
      <p role="status" class="hint connection">
        {connection === 'reconnecting' && !ended ? 'Connection lost. Reconnecting…' : ''}
      </p>
      {ended && (
        <p role="alert" class="error">
          {ended}
        </p>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      <div class="group-body">
        <div class="group-chat">
          <MessageLog messages={messages} pending={pending} me={me} assistants={shared} onOlder={hasMore ? loadOlder : undefined} />
          <GroupComposer disabled={!!ended} onSend={send} mentions={group?.intelligentResponses ? shared.map((a) => a.name) : []} />
        </div>
        <aside id="group-panel" class={`group-panel${panelOpen ? ' open' : ''}`} aria-label="Members and invite">
          {group && <GroupPanel group={group} members={members} me={me} assistants={shared} onGroup={setGroup} onLeft={() => navigate('/groups')} onError={setError} />}
        </aside>
      </div>
    </section>
  );
}

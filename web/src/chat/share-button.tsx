import { useState } from 'preact/hooks';
import { onLinkClick } from '../shared/router';
// The type only: the dialog's code stays in its chunk.
import type { ShareDialog } from './share-dialog';

/** The conversation as the chat's header needs it to say who may share it. */
export interface SharedConversation {
  id: string;
  title: string;
  ownerId: string;
  groupChatId?: string | null;
}

/**
 * Sharing, from the conversation's header. The owner gets **Share…**, whose dialog is a chunk of
 * its own, fetched on the first click (most conversations are never shared). A conversation
 * shared with the user says so; a group chat's says how its people join instead, since the
 * server refuses to share it (docs/chat.md, "Sharing").
 */
export function ShareControls({ conversation, userId }: { conversation: SharedConversation; userId: string }) {
  const [Dialog, setDialog] = useState<typeof ShareDialog>();
  const [error, setError] = useState<string>();
  if (conversation.groupChatId) {
    const path = `/g/${conversation.groupChatId}`;
    return (
      <p class="share-note hint">
        This is a group chat's conversation: people join it by an invite from{' '}
        <a href={path} onClick={onLinkClick(path)}>
          its group's page
        </a>
        .
      </p>
    );
  }
  if (conversation.ownerId !== userId) return <p class="share-note hint">Shared with you: you can read and write here; only its owner can share or delete it.</p>;

  const open = () =>
    import('./share-dialog').then(
      (m) => (setError(undefined), setDialog(() => m.ShareDialog)),
      () => setError('Sharing could not be loaded. Check the connection and try again.'),
    );
  return (
    <>
      <button type="button" class="share-button" aria-haspopup="dialog" onClick={() => void open()}>
        Share…
      </button>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {Dialog && <Dialog conversationId={conversation.id} title={conversation.title} onClose={() => setDialog(undefined)} />}
    </>
  );
}

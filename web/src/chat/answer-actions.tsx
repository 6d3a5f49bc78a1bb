import { useRef, useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';
import { copyText } from '../shared/markdown-view';
import { speakAnswer } from '../voice/speak';
import { Icon } from '../shared/icons';
import { FormButtons } from '../shared/form-buttons';
import { BookmarkButton } from './bookmark-button';

export interface Rating {
  itemId: string;
  rating: 'up' | 'down';
  reasons: string[];
  comment: string | null;
}

/** feedback/setFeedback's reasons (docs/feedback.md), in words. */
const REASONS: [string, string][] = [
  ['inaccurate', 'Inaccurate'],
  ['incomplete', 'Incomplete'],
  ['unhelpful', 'Not helpful'],
  ['off_topic', 'Off topic'],
  ['too_long', 'Too long'],
  ['too_short', 'Too short'],
  ['harmful', 'Harmful'],
  ['accurate', 'Accurate'],
  ['helpful', 'Helpful'],
  ['well_written', 'Well written'],
];

interface Props {
  conversationId: string;
  itemId: string;
  text: string;
  rating?: Rating;
  onRated(rating: Rating | undefined): void;
  onRegenerate?(): void;
  /** The server has a text-to-speech server (server/getCapabilities). */
  canSpeak: boolean;
}

/** Under a stored answer: copy it, regenerate it, hear it, rate it, bookmark it. */
export function AnswerActions({ conversationId, itemId, text, rating, onRated, onRegenerate, canSpeak }: Props) {
  const [copied, setCopied] = useState('');
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<string>();
  const copy = async () => {
    setCopied((await copyText(text)) ? 'Copied the answer.' : 'The browser did not allow copying.');
    setTimeout(() => setCopied(''), 3000);
  };
  const rate = async (value: 'up' | 'down', reasons: string[] = [], comment = '') => {
    setError(undefined);
    try {
      onRated(await call<Rating>('feedback/setFeedback', { itemId, rating: value, reasons, ...(comment.trim() ? { comment: comment.trim() } : {}) }));
      setAsking(false);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'The rating could not be saved.');
    }
  };
  const withdraw = async () => {
    await call('feedback/deleteFeedback', { itemId }).then(() => onRated(undefined), () => setError('The rating could not be withdrawn.'));
  };
  return (
    <div class="answer-actions">
      <button type="button" onClick={copy}>
        Copy
      </button>
      {onRegenerate && (
        <button type="button" onClick={onRegenerate}>
          Regenerate
        </button>
      )}
      {canSpeak && <ReadAloud itemId={itemId} />}
      <button type="button" aria-pressed={rating?.rating === 'up'} aria-label="Good answer" onClick={() => (rating?.rating === 'up' ? withdraw() : rate('up'))}>
        <Icon name="thumb-up" />
      </button>
      <button type="button" aria-pressed={rating?.rating === 'down'} aria-label="Bad answer" aria-expanded={asking} onClick={() => (rating?.rating === 'down' ? withdraw() : setAsking(!asking))}>
        <Icon name="thumb-down" />
      </button>
      <BookmarkButton conversationId={conversationId} itemId={itemId} label="Bookmark this answer" />
      <span role="status" class="hint">
        {copied || (rating ? (rating.rating === 'up' ? 'You rated this answer good.' : 'You rated this answer bad.') : '')}
      </span>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {asking && <DownForm onSubmit={(reasons, comment) => rate('down', reasons, comment)} onCancel={() => setAsking(false)} />}
    </div>
  );
}

function DownForm({ onSubmit, onCancel }: { onSubmit(reasons: string[], comment: string): void; onCancel(): void }) {
  const [reasons, setReasons] = useState<string[]>([]);
  const [comment, setComment] = useState('');
  const toggle = (r: string, on: boolean) => setReasons((list) => (on ? [...list, r] : list.filter((x) => x !== r)));
  return (
    <form
      class="feedback-form"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit(reasons, comment);
      }}
    >
      <fieldset>
        <legend>What was wrong with it?</legend>
        {REASONS.slice(0, 7).map(([value, label]) => (
          <label key={value} class="check">
            <input type="checkbox" checked={reasons.includes(value)} onChange={(e) => toggle(value, e.currentTarget.checked)} /> {label}
          </label>
        ))}
      </fieldset>
      <label>
        Comment (optional)
        <textarea rows={2} maxLength={2000} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
      </label>
      <FormButtons class="edit-buttons" submit="Send feedback" onCancel={onCancel} />
    </form>
  );
}

/** Read aloud, and Stop while it plays. */
function ReadAloud({ itemId }: { itemId: string }) {
  const audio = useRef<HTMLAudioElement>(null);
  const playing = useRef<AbortController>(undefined);
  const [state, setState] = useState<'idle' | 'loading' | 'playing'>('idle');
  const [error, setError] = useState<string>();
  const start = async () => {
    setError(undefined);
    playing.current = new AbortController();
    setState('loading');
    try {
      await speakAnswer(itemId, audio.current!, playing.current.signal);
      setState('playing');
    } catch (err) {
      if (!playing.current.signal.aborted) setError(err instanceof ApiError ? err.message : 'The answer could not be read aloud.');
      setState('idle');
    }
  };
  const stop = () => {
    playing.current?.abort();
    audio.current?.pause();
    setState('idle');
  };
  return (
    <>
      {state === 'idle' ? (
        <button type="button" onClick={start}>
          Read aloud
        </button>
      ) : (
        <button type="button" onClick={stop}>
          Stop reading
        </button>
      )}
      <audio ref={audio} class="speech" onEnded={() => setState('idle')} />
      {error && (
        <span role="alert" class="error">
          {error}
        </span>
      )}
    </>
  );
}

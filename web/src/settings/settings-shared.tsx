import { useRef, useState } from 'preact/hooks';
import type { RefObject } from 'preact';
import { ApiError } from '../shared/api';

/** A date as the user reads it, in their own locale. */
export const when = (iso: string) => new Date(iso).toLocaleString();

/** What went wrong, in words: the API's own message when it answered one, else a plain sentence. */
export function messageOf(err: unknown, doing: string): string {
  if (err instanceof ApiError) return `${doing} failed: ${err.message}`;
  return `${doing} failed: Parley could not be reached.`;
}

/**
 * A section's outcome line: "Saved"-like news in a status region, failures in an alert. Both
 * regions are in the page from the start so screen readers announce what comes into them.
 */
export function useOutcome() {
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');
  return {
    done: (text: string) => (setError(''), setStatus(text)),
    failed: (err: unknown, doing: string) => (setStatus(''), setError(messageOf(err, doing))),
    clear: () => (setStatus(''), setError('')),
    view: (
      <div class="outcome">
        <p role="status" class="status">
          {status}
        </p>
        <p role="alert" class="error">
          {error}
        </p>
      </div>
    ),
  };
}

/**
 * Copy the value of a read-only box to the clipboard, saying so in `copied` (for a status region).
 * Without clipboard access (an insecure origin, a refused permission) the box is selected so the
 * user copies by hand; `what` names it in that sentence ("the key", "the address").
 */
export function useCopy(box: RefObject<HTMLInputElement | null>, what: string) {
  const [copied, setCopied] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(box.current?.value ?? '');
      setCopied('Copied');
    } catch {
      box.current?.select();
      setCopied(`Copying was refused: ${what} is selected, copy it with your keyboard.`);
    }
  };
  return { copied, copy };
}

/** A read-only address to hand to another app, with Copy and what the copy did (said to screen readers). */
export function CopyField({ id, label, value, copyLabel }: { id: string; label: string; value: string; copyLabel: string }) {
  const box = useRef<HTMLInputElement>(null);
  const { copied, copy } = useCopy(box, 'the address');
  return (
    <>
      <div class="fresh-key-row">
        <label class="visually-hidden" for={id}>
          {label}
        </label>
        <input id={id} ref={box} readOnly value={value} />
        <button type="button" onClick={copy} aria-label={copyLabel}>
          Copy
        </button>
      </div>
      <p role="status" class="status">
        {copied}
      </p>
    </>
  );
}

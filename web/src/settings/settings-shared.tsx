import { useState } from 'preact/hooks';
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

import { useEffect, useRef } from 'preact/hooks';
import { navigate } from '../shared/router';

/** The app's keyboard shortcuts, as the help dialog lists them. */
const SHORTCUTS: [string, string][] = [
  ['Enter', 'Send the message'],
  ['Shift + Enter', 'New line in the message'],
  ['/', 'Go to the message box'],
  ['Alt + N', 'New chat'],
  ['Alt + R', 'Research'],
  ['Alt + F', 'Files'],
  ['Escape', 'Cancel an edit, close a dialog'],
  ['?', 'Show these shortcuts'],
];

/** True while the user types somewhere: a plain key is theirs, not a shortcut. */
const typing = (e: KeyboardEvent) => {
  const t = e.target as HTMLElement | null;
  return !!t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
};

/** The app-wide shortcuts; `?` opens the help. */
export function useShortcuts(onHelp: () => void) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey) return;
      const go = (path: string) => (e.preventDefault(), navigate(path));
      if (e.altKey) {
        const key = e.code;
        if (key === 'KeyN') go('/');
        else if (key === 'KeyR') go('/research');
        else if (key === 'KeyF') go('/files');
        return;
      }
      if (typing(e)) return;
      if (e.key === '?') (e.preventDefault(), onHelp());
      else if (e.key === '/') {
        const box = document.getElementById('message');
        if (box) (e.preventDefault(), box.focus());
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [onHelp]);
}

/** The shortcuts, in a modal dialog (the browser's own: focus stays inside, Escape closes it). */
export function HelpDialog({ open, onClose }: { open: boolean; onClose(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (open && d && !d.open) d.showModal();
    if (!open && d?.open) d.close();
  }, [open]);
  return (
    <dialog ref={dialog} class="help-dialog" aria-labelledby="help-title" onClose={onClose}>
      <h2 id="help-title">Keyboard shortcuts</h2>
      <table>
        <tbody>
          {SHORTCUTS.map(([keys, what]) => (
            <tr key={keys}>
              <th scope="row">
                <kbd>{keys}</kbd>
              </th>
              <td>{what}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form method="dialog">
        <button type="submit">Close</button>
      </form>
    </dialog>
  );
}

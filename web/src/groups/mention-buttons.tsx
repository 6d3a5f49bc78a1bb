/**
 * The shared assistants one may mention (docs/groups.md, "Assistants in a group"), as buttons
 * under the message box. While the text ends in a mention being typed (`@tra`), only the names
 * it begins are offered, and a click completes it; otherwise a click adds the mention at the end.
 */

/** The `@…` being typed at the end of the text (after a space or at its start), without the `@`. */
const typing = (text: string) => /(?:^|\s)@([^@\n]*)$/.exec(text)?.[1];

const startsLike = (name: string, partial: string) => name.toLowerCase().startsWith(partial.toLowerCase());

/** The names to offer for `text`: those its mention being typed begins, or all of them. */
export function offeredMentions(text: string, names: string[]): string[] {
  const partial = typing(text);
  const matching = partial ? names.filter((n) => startsLike(n, partial)) : [];
  return matching.length ? matching : names;
}

/** `text` with `@name ` in place of the mention being typed, or added at its end. */
export function withMention(text: string, name: string): string {
  const partial = typing(text);
  if (partial !== undefined && startsLike(name, partial)) return `${text.slice(0, text.length - partial.length)}${name} `;
  return `${text}${text && !/\s$/.test(text) ? ' ' : ''}@${name} `;
}

export function MentionButtons({ text, names, disabled, onMention }: { text: string; names: string[]; disabled: boolean; onMention(text: string): void }) {
  if (!names.length) return null;
  return (
    <p class="mentions hint">
      Ask an assistant:{' '}
      {offeredMentions(text, names).map((name) => (
        <button type="button" key={name} class="mention" disabled={disabled} onClick={() => onMention(withMention(text, name))}>
          @{name}
        </button>
      ))}
    </p>
  );
}

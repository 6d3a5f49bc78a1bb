import type { Ref } from 'preact';

/**
 * The box a message is written in, for a chat and a group alike: labelled "Message", Enter sends
 * (`onEnter`), Shift+Enter adds a line, and Enter that ends an input method's composition (a
 * Japanese or Chinese word being typed) only ends the composition.
 */
export function MessageBox(props: { boxRef: Ref<HTMLTextAreaElement>; rows: number; value: string; placeholder: string; disabled?: boolean; onInput(text: string): void; onEnter(e: Event): void; onPaste?(e: ClipboardEvent): void }) {
  return (
    <>
      <label for="message" class="visually-hidden">
        Message
      </label>
      <textarea
        id="message"
        ref={props.boxRef}
        rows={props.rows}
        value={props.value}
        disabled={props.disabled}
        placeholder={props.placeholder}
        onInput={(e) => props.onInput(e.currentTarget.value)}
        onPaste={props.onPaste}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) props.onEnter(e);
        }}
      />
    </>
  );
}

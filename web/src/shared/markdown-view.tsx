import { useLayoutEffect, useRef } from 'preact/hooks';
import { renderMarkdown } from './markdown';

let highlighting: Promise<typeof import('./markdown-highlight')> | undefined;
let typesetting: Promise<typeof import('./markdown-math-render')> | undefined;
/** The highlighting and the math chunks, each fetched once, the first time an answer needs it. */
const loadHighlight = () => (highlighting ??= import('./markdown-highlight'));
const loadMath = () => (typesetting ??= import('./markdown-math-render'));

/**
 * Markdown written by a model, rendered safely (markdown.ts), then finished in place: a Copy
 * button on each code block, and syntax highlighting and typeset math from a chunk loaded only
 * when the answer has code or math (a plain answer costs nothing more), one for each.
 */
export function Markdown({ text, class: className }: { text: string; class?: string }) {
  const box = useRef<HTMLDivElement>(null);
  const html = renderMarkdown(text);
  useLayoutEffect(() => {
    const root = box.current;
    if (!root) return;
    for (const pre of root.querySelectorAll('pre')) addCopyButton(pre);
    const codes = [...root.querySelectorAll<HTMLElement>('pre > code:not(.hljs)')];
    const maths = [...root.querySelectorAll<HTMLElement>('.math:not([data-typeset])')];
    // The answer may have moved on (more text streamed in) by the time a chunk arrives: only
    // what is still in the page is worked on.
    if (codes.length) void loadHighlight().then((x) => codes.forEach((code) => code.isConnected && x.highlight(code)));
    if (maths.length) void loadMath().then((x) => maths.forEach((m) => m.isConnected && x.typeset(m)));
  }, [html]);
  return <div ref={box} class={`markdown${className ? ` ${className}` : ''}`} dangerouslySetInnerHTML={{ __html: html }} />;
}

function addCopyButton(pre: HTMLElement): void {
  if (pre.querySelector(':scope > .copy-code')) return;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'copy-code';
  button.textContent = 'Copy code';
  button.addEventListener('click', () => {
    const code = pre.querySelector('code')?.textContent ?? '';
    void copyText(code).then((ok) => (button.textContent = ok ? 'Copied' : 'Select and copy'));
    setTimeout(() => (button.textContent = 'Copy code'), 2000);
  });
  pre.prepend(button);
}

/** Put text on the clipboard; false where the browser refuses (an insecure origin, a denied permission). */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

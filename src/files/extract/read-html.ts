/**
 * HTML to text with Bun's built-in HTMLRewriter (lol-html): a streaming tokenizer that builds no
 * tree, so the text is written as the page streams by and a large page costs little more memory
 * than its text. Scripts and styles are dropped; block elements become line or paragraph breaks
 * so the chunker can split where the page did; entities are decoded (`entities`, as markdown-it).
 *
 * lol-html's cost for an end-tag handler grows with the number of such handlers still open, so
 * a hostile page of 200,000 nested <div>s took 14 s with one on every element. At most
 * `MAX_OPEN_END_HANDLERS` are open at a time: past that depth an element's start still breaks
 * the line, its end does not, and a page of any depth is read in linear time. The hidden
 * elements are raw text to the tokenizer (they cannot nest), so they need no such bound.
 */
import { decodeHTML } from 'entities';
import { capText, type CappedText } from './read-plain';

const HIDDEN = 'script, style, noscript, iframe, noembed, noframes, xmp';
const PRE = 'pre, listing';
const PARAGRAPHS = 'p, h1, h2, h3, h4, h5, h6, blockquote, pre, ul, ol, dl, table, section, article, header, footer, main, aside, nav, figure, form, fieldset, address, hr, title';
const LINES = 'div, li, dt, dd, tr, caption, figcaption, br, summary, details, label, option, textarea';
const CELLS = 'td, th';
const MAX_OPEN_END_HANDLERS = 64;

// A break between two runs of text; the widest asked for wins (a paragraph's end next to a
// line's end is one paragraph break).
const RANK = { '': 0, '\t': 1, '\n': 2, '\n\n': 3 } as const;
type Gap = keyof typeof RANK;

class Enough extends Error {}

export function htmlToText(html: string, maxChars: number): CappedText {
  const out = createTextWriter(maxChars);
  let hidden = 0;
  let pre = 0;
  let open = 0;
  /** Run `atEnd` at the element's end tag, if one can still be watched for. */
  const onEnd = (el: HTMLRewriterTypes.Element, atEnd: () => void) => {
    if (el.selfClosing || !el.canHaveContent || open >= MAX_OPEN_END_HANDLERS) return false;
    open++;
    el.onEndTag(() => {
      open--;
      atEnd();
    });
    return true;
  };
  const gapAround = (gap: Gap) => ({
    element(el: HTMLRewriterTypes.Element) {
      out.gap(gap);
      onEnd(el, () => out.gap(gap));
    },
  });
  try {
    new HTMLRewriter()
      .on(HIDDEN, {
        element(el) {
          if (el.selfClosing || !el.canHaveContent) return;
          hidden++;
          el.onEndTag(() => {
            hidden--;
          });
        },
      })
      .on(PRE, {
        element(el) {
          out.gap('\n\n');
          if (onEnd(el, () => (out.gap('\n\n'), pre--))) pre++;
        },
      })
      .on(PARAGRAPHS, gapAround('\n\n'))
      .on(LINES, gapAround('\n'))
      .on(CELLS, gapAround('\t'))
      .onDocument({
        text(chunk) {
          if (hidden === 0 && chunk.text) out.text(chunk.text, pre > 0);
        },
      })
      .transform(html);
  } catch (err) {
    if (!(err instanceof Enough)) throw err;
  }
  return out.finish();
}

/**
 * Collects runs of raw text between breaks (a chunk may end inside an entity, so a run is
 * decoded whole), collapses their whitespace outside <pre>, and stops the page (`Enough`) once
 * the text is past `maxChars`.
 */
function createTextWriter(maxChars: number) {
  const parts: string[] = [];
  let length = 0;
  let pending: Gap = '';
  let run = '';
  let runPre = false;
  let truncated = false;

  const flush = () => {
    if (!run) return;
    let text = decodeHTML(run);
    run = '';
    if (!runPre) {
      text = text.replace(/\s+/g, ' ');
      // Whitespace between blocks is layout, not text.
      if (text === ' ') {
        if (!pending && length && !parts.at(-1)!.endsWith(' ')) push(' ');
        return;
      }
      if (pending || !length) text = text.trimStart();
    }
    if (pending && length) {
      const last = parts.at(-1)!;
      const trimmed = last.replace(/[ \t]+$/, '');
      parts[parts.length - 1] = trimmed;
      length -= last.length - trimmed.length;
      push(pending);
    }
    pending = '';
    push(text);
  };
  const push = (text: string) => {
    parts.push(text);
    length += text.length;
    if (length > maxChars) {
      truncated = true;
      throw new Enough();
    }
  };

  return {
    text(raw: string, inPre: boolean) {
      if (run && inPre !== runPre) flush();
      runPre = inPre;
      run += raw;
    },
    gap(gap: Gap) {
      flush();
      if (RANK[gap] > RANK[pending]) pending = gap;
    },
    finish(): CappedText {
      if (!truncated) {
        try {
          flush();
        } catch (err) {
          if (!(err instanceof Enough)) throw err;
        }
      }
      const text = parts.join('').replace(/[ \t]+\n/g, '\n').trim();
      return truncated ? { text: capText(text, maxChars).text, truncated } : { text, truncated };
    },
  };
}

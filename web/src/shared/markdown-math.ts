import type { MarkdownIt } from 'markdown-it';
import type { StateBlock, StateInline } from 'markdown-it';

/**
 * TeX in answers: `$…$` and `\(…\)` inline, `$$…$$` and `\[…\]` as blocks (what models write).
 * markdown-it only marks them: `<span class="math">` (or `<div class="math display">`) holding
 * the TeX as text, so the page shows the source until KaTeX (a chunk loaded only then,
 * markdown-extras.ts) typesets it. A `$` followed by a space or a digit after the closing one
 * ("$5 and $6") is money, not math.
 */
export function mathPlugin(md: MarkdownIt): void {
  md.inline.ruler.before('escape', 'math_inline', (state: StateInline, silent: boolean) => {
    const src = state.src;
    const start = state.pos;
    let open: string;
    let close: string;
    if (src.startsWith('\\(', start)) [open, close] = ['\\(', '\\)'];
    else if (src[start] === '$' && src[start + 1] !== '$' && src[start + 1] !== ' ' && src[start + 1] !== undefined) [open, close] = ['$', '$'];
    else return false;
    let end = src.indexOf(close, start + open.length);
    while (end > 0 && close === '$' && src[end - 1] === '\\') end = src.indexOf(close, end + 1);
    if (end < 0) return false;
    const tex = src.slice(start + open.length, end);
    if (!tex.trim() || (close === '$' && (/\s$/.test(tex) || /\d/.test(src[end + 1] ?? '')))) return false;
    if (!silent) {
      const token = state.push('math_inline', 'span', 0);
      token.content = tex;
    }
    state.pos = end + close.length;
    return true;
  });
  md.block.ruler.before('fence', 'math_block', (state: StateBlock, startLine: number, endLine: number, silent: boolean) => {
    const first = state.src.slice(state.bMarks[startLine]! + state.tShift[startLine]!, state.eMarks[startLine]);
    const open = first.startsWith('$$') ? '$$' : first.startsWith('\\[') ? '\\[' : undefined;
    if (!open) return false;
    const close = open === '$$' ? '$$' : '\\]';
    let line = startLine;
    let text = first.slice(2);
    let found = text.trimEnd().endsWith(close);
    while (!found && ++line < endLine) {
      const l = state.src.slice(state.bMarks[line]! + state.tShift[line]!, state.eMarks[line]);
      text += `\n${l}`;
      found = l.trimEnd().endsWith(close);
    }
    if (!found) return false;
    if (silent) return true;
    const token = state.push('math_block', 'div', 0);
    token.content = text.trimEnd().slice(0, -close.length).trim();
    token.map = [startLine, line + 1];
    state.line = line + 1;
    return true;
  });
  const escape = md.utils.escapeHtml;
  md.renderer.rules.math_inline = (tokens, idx) => `<span class="math">${escape(tokens[idx]!.content)}</span>`;
  md.renderer.rules.math_block = (tokens, idx) => `<div class="math display">${escape(tokens[idx]!.content)}</div>\n`;
}

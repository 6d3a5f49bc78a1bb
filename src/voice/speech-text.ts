/**
 * An assistant answer (Markdown) as text to read aloud: the markup a voice would spell out goes,
 * the words stay. Code blocks are left out whole (nobody wants a program read to them); a link
 * keeps its text, an image its description, a table row its cells. Text a caller sends itself
 * (`text`) is read as it is: this is for stored answers only.
 */
export function speechTextOf(markdown: string): string {
  const text = markdown
    .replace(/\r\n?/g, '\n')
    // A fence runs to its closing fence, or to the end of an answer that was cut short.
    .replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?(?:\n {0,3}\1[^\n]*|(?![\s\S]))/gm, '')
    .replace(/<think>[\s\S]*?<\/think>/gi, '');
  return text
    .split('\n')
    .map(speakLine)
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const TABLE_RULE = /^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$/;
const THEMATIC_BREAK = /^(?:[-*_]\s*){3,}$/;

function speakLine(line: string): string {
  let l = line.trim();
  if (TABLE_RULE.test(l) || THEMATIC_BREAK.test(l)) return '';
  l = l
    .replace(/^(>\s?)+/, '')
    .replace(/^#{1,6}\s+/, '')
    .replace(/^(?:[-*+]|\d+[.)])\s+/, '');
  if (l.startsWith('|'))
    l = l
      .replace(/^\||\|$/g, '')
      .split('|')
      .map((cell) => cell.trim())
      .filter(Boolean)
      .join(', ');
  return l
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/(\*\*|__|~~)(?=\S)(.*?\S)\1/g, '$2')
    .replace(/(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?!\w)/g, '$1$2')
    .replace(/<\/?[a-z][^>]*>/gi, '')
    .replace(/\s+/g, ' ');
}

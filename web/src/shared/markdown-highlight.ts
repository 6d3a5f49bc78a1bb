import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

/**
 * Syntax highlighting, a chunk of its own (markdown-view.tsx imports it only when an answer has a
 * code block): highlight.js's core with the languages models write most. It adds `<span
 * class="hljs-…">` only, which the page's policy allows; the colours are the page's (chat.css).
 */
for (const [name, lang] of Object.entries({ bash, c, cpp, css, diff, go, java, javascript, json, python, rust, sql, typescript, xml, yaml })) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'shell', 'zsh'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['rs'], { languageName: 'rust' });

/** Highlight a block of code: by its fence's language when known, else as the likeliest of these. */
export function highlight(code: HTMLElement): void {
  const lang = /\blanguage-([\w+-]+)/.exec(code.className)?.[1];
  if (lang && !hljs.getLanguage(lang)) return;
  const text = code.textContent ?? '';
  const result = lang ? hljs.highlight(text, { language: lang, ignoreIllegals: true }) : hljs.highlightAuto(text);
  // highlight.js escapes the code it returns: the HTML holds its spans and the text only.
  code.innerHTML = result.value;
  code.classList.add('hljs');
}

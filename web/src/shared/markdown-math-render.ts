import katex from 'katex';

/**
 * Math, a chunk of its own (markdown-view.tsx imports it only when an answer has math): KaTeX,
 * and its stylesheet and fonts (assets of their own, src/web/math-assets.ts) added to the page
 * the first time. KaTeX's `render` sets its positions through `element.style` (CSSOM, which the
 * page's `style-src 'self'` leaves alone), where an HTML string's style attributes would be refused.
 */
let stylesheet: HTMLLinkElement | undefined;

/** Typeset one formula in place; a formula KaTeX cannot read stays as its TeX, marked. */
export function typeset(el: HTMLElement): void {
  if (!stylesheet) {
    stylesheet = Object.assign(document.createElement('link'), { rel: 'stylesheet', href: PARLEY_KATEX_CSS });
    document.head.append(stylesheet);
  }
  const tex = el.textContent ?? '';
  try {
    katex.render(tex, el, { displayMode: el.classList.contains('display'), throwOnError: true, trust: false, maxExpand: 1000, maxSize: 50 });
    el.dataset.typeset = 'true';
  } catch {
    el.textContent = tex;
    el.classList.add('math-error');
  }
}

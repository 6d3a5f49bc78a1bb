/** The URL of KaTeX's stylesheet, with its hash: set at bundling (src/web/bundle-web.ts, math-assets.ts). */
declare const PARLEY_KATEX_CSS: string;

import MarkdownIt from 'markdown-it';
import { mathPlugin } from './markdown-math';

/**
 * Answers are Markdown written by a model, so by anyone who can put words in front of it.
 * `html: false` turns raw HTML into text, and markdown-it's `validateLink` refuses
 * `javascript:`, `vbscript:`, `file:` and non-image `data:` URLs: what it renders cannot run
 * script. The page's Content-Security-Policy is the second wall.
 */
const md = new MarkdownIt({ html: false, linkify: true, breaks: false }).use(mathPlugin);

// Links leave the app in a new tab and tell the other site nothing about where they came from.
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet('target', '_blank');
  tokens[idx]!.attrSet('rel', 'noopener noreferrer');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

export const renderMarkdown = (text: string): string => md.render(text);

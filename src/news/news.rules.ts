/** What a news post may hold, for the CLI that posts them (and any later admin operation). */

export const NEWS_TITLE_MAX_CHARS = 200;

export class NewsRefusal extends Error {}

/** The post's title and body, trimmed, or a refusal naming the option at fault. */
export function checkNewsPost(input: { title: string; body: string }, bodyMaxChars: number): { title: string; body: string } {
  const title = input.title.trim();
  const body = input.body.trim();
  if (!title) throw new NewsRefusal('--title must not be blank');
  if (/[\r\n]/.test(title)) throw new NewsRefusal('--title must be one line');
  if ([...title].length > NEWS_TITLE_MAX_CHARS) throw new NewsRefusal(`--title must be at most ${NEWS_TITLE_MAX_CHARS} characters`);
  if (!body) throw new NewsRefusal('--body must not be blank');
  if ([...body].length > bodyMaxChars) throw new NewsRefusal(`--body must be at most ${bodyMaxChars} characters (PARLEY_NEWS_BODY_MAX_CHARS), got ${[...body].length}`);
  return { title, body };
}

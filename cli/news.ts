import type { Command } from 'commander';
import { createNewsPost, deleteNewsPost, listNewsPosts } from '../src/news/news.store';
import { checkNewsPost, NEWS_TITLE_MAX_CHARS, NewsRefusal } from '../src/news/news.rules';
import type { NewsPost } from '../src/db/schema';
import { iso } from '../src/ids';
import { cliConfig, common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';

const postView = (p: NewsPost) => ({ id: p.id, title: p.title, body: p.body, createdAt: iso(p.createdAt) });

export function newsCommands(program: Command) {
  const news = program.command('news').description('announcements users read in the app (news/list)');

  common(news.command('post'))
    .description('publish an announcement to every user')
    .requiredOption('--title <title>', `one line, at most ${NEWS_TITLE_MAX_CHARS} characters`)
    .requiredOption('--body <markdown>', 'the text, in Markdown (at most PARLEY_NEWS_BODY_MAX_CHARS characters)')
    .action(
      runAction(async (opts: CommonOptions & { title: string; body: string }) => {
        let post;
        try {
          post = checkNewsPost(opts, cliConfig(opts).newsBodyMaxChars);
        } catch (err) {
          throw err instanceof NewsRefusal ? new CliError(err.message) : err;
        }
        const { store } = await openCliStore(opts);
        const created = await store.write((tx) => createNewsPost(tx, post, Date.now()));
        output(opts, postView(created), `posted ${created.id}: ${created.title}`);
      }),
    );

  common(news.command('list'))
    .description('list the announcements, newest first, with how many users have read each')
    .action(
      runAction(async (opts: CommonOptions) => {
        const { store } = await openCliStore(opts);
        const rows = await store.read((tx) => listNewsPosts(tx));
        output(
          opts,
          rows.map((p) => ({ ...postView(p), readCount: p.readCount })),
          rows.length ? rows.map((p) => `${p.id}  ${iso(p.createdAt)}  read by ${p.readCount}  ${p.title}`).join('\n') : 'no news',
        );
      }),
    );

  common(news.command('delete'))
    .description('delete an announcement (and who has read it)')
    .argument('<id>', 'the post, as `news list` shows it')
    .action(
      runAction(async (id: string, opts: CommonOptions) => {
        const { store } = await openCliStore(opts);
        if (!(await store.write((tx) => deleteNewsPost(tx, id)))) throw new CliError(`no news post ${id}`);
        output(opts, { deleted: true, id }, `deleted ${id}`);
      }),
    );
}

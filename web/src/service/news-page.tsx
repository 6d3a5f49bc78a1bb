import './service.css';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';
import { Markdown } from '../shared/markdown-view';
import { UNREAD_CHANGED } from '../shell/top-bar';

interface Post {
  id: string;
  title: string;
  body: string;
  createdAt: string;
  read: boolean;
}

/**
 * News from the server's admins (news/list), newest first, the unread ones marked. Opening the
 * page shows them all as they were, then marks them read (news/markRead `all`): the badge clears,
 * and the marks stay on screen until the next visit so the reader sees what was new.
 */
export function NewsPage() {
  const [posts, setPosts] = useState<Post[]>();
  const [hasMore, setHasMore] = useState(false);
  const [error, setError] = useState<string>();
  const more = (before?: string) =>
    call<{ posts: Post[]; hasMore: boolean; unreadCount: number }>('news/list', { limit: 20, ...(before ? { before } : {}) }).then(
      (r) => {
        setPosts((p) => [...(before ? (p ?? []) : []), ...r.posts]);
        setHasMore(r.hasMore);
        if (r.unreadCount > 0) void call('news/markRead', { all: true }).then(() => dispatchEvent(new Event(UNREAD_CHANGED)), () => undefined);
      },
      (err) => setError(err instanceof ApiError ? err.message : 'The news could not be loaded.'),
    );
  useEffect(() => void more(), []);
  return (
    <section class="page news" tabIndex={0} aria-labelledby="news-title">
      <h2 id="news-title">News</h2>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {posts?.length === 0 && <p class="hint">No news yet.</p>}
      {posts?.map((p) => (
        <article key={p.id} class={`news-post${p.read ? '' : ' unread'}`} aria-labelledby={`post-${p.id}`}>
          <h3 id={`post-${p.id}`}>
            {p.title}
            {!p.read && <span class="badge">New</span>}
          </h3>
          <p class="hint">
            <time dateTime={p.createdAt}>{new Date(p.createdAt).toLocaleString()}</time>
          </p>
          <Markdown text={p.body} />
        </article>
      ))}
      {hasMore && (
        <button type="button" onClick={() => more(posts?.at(-1)?.id)}>
          Older news
        </button>
      )}
    </section>
  );
}

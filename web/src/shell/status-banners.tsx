import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';
import { onLinkClick } from '../shared/router';

/** Whether the browser has a network: the page says when it has none, instead of failing quietly. */
export function useOnline(): boolean {
  const [online, setOnline] = useState(() => navigator.onLine);
  useEffect(() => {
    const on = () => setOnline(true);
    const off = () => setOnline(false);
    addEventListener('online', on);
    addEventListener('offline', off);
    return () => (removeEventListener('online', on), removeEventListener('offline', off));
  }, []);
  return online;
}

export function OfflineBanner() {
  return useOnline() ? null : (
    <p role="status" class="banner offline">
      You are offline. Parley will work again when the connection is back.
    </p>
  );
}

/** The version whose release notes the user has seen, in this browser. */
export const SEEN_VERSION = 'parley.seenVersion';

/**
 * "What's new" after an upgrade: the server's version (releaseNotes/list's `currentVersion`)
 * differs from the one this browser last saw. The first visit only records it: a new user has
 * nothing to catch up on.
 */
export function WhatsNewBanner() {
  const [version, setVersion] = useState<string>();
  useEffect(() => {
    call<{ currentVersion: string }>('releaseNotes/list', {}).then(
      (r) => {
        const seen = localStorage.getItem(SEEN_VERSION);
        if (!seen) localStorage.setItem(SEEN_VERSION, r.currentVersion);
        else if (seen !== r.currentVersion) setVersion(r.currentVersion);
      },
      () => undefined,
    );
  }, []);
  if (!version) return null;
  const dismiss = () => (localStorage.setItem(SEEN_VERSION, version), setVersion(undefined));
  return (
    <p role="status" class="banner whats-new">
      Parley was updated to {version}.{' '}
      <a href="/whats-new" onClick={(e) => (dismiss(), onLinkClick('/whats-new')(e))}>
        See what's new
      </a>{' '}
      <button type="button" onClick={dismiss}>
        Dismiss
      </button>
    </p>
  );
}

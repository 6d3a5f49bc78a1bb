import { useState } from 'preact/hooks';

/** 'unsupported' where the browser has no notifications (some phones, insecure origins). */
export type Permission = NotificationPermission | 'unsupported';
const permissionNow = (): Permission => (typeof Notification === 'undefined' ? 'unsupported' : Notification.permission);

/**
 * The browser's notification permission, asked only from the user's click (browsers refuse, and
 * users resent, a prompt nobody asked for), and whether this page promised to notify.
 */
export function useNotifyPermission() {
  const [permission, setPermission] = useState<Permission>(permissionNow);
  const [asked, setAsked] = useState(false);
  const ask = async () => {
    if (permission === 'unsupported') return;
    const answer = await Notification.requestPermission();
    setPermission(answer);
    setAsked(answer === 'granted');
  };
  return { permission, asked, ask };
}

/**
 * Tell the user a followed run ended, when that is news: the page is hidden, or they asked to
 * be told. Needs the permission already given; never asks for it here.
 */
export function notifyEnded(title: string, body: string, asked: boolean): void {
  if (permissionNow() !== 'granted' || !(asked || document.hidden)) return;
  try {
    const n = new Notification(title, { body, tag: 'parley-research' });
    n.onclick = () => (focus(), n.close());
  } catch {
    // Chrome on Android allows notifications only from a service worker: the page says it all the same.
  }
}

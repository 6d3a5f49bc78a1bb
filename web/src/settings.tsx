import './settings.css';
import { onLinkClick } from './router';

/** Settings (being built). */
export function Settings() {
  return (
    <section class="page" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <a href="/sessions" onClick={onLinkClick('/sessions')}>Sessions</a>
    </section>
  );
}

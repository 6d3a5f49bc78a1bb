import { render } from 'preact';
import { App } from './app';
import { Setup } from './setup/setup';
import { registerServiceWorker } from './shell/register-sw';
import './shared/style.css';

const root = document.getElementById('app')!;
// The first-run page stands apart from the app: its visitor is not signed in yet (web/src/setup/).
// So does the consent page an MCP client sends its user to (web/src/oauth/), a chunk of its own.
if (location.pathname === '/oauth/authorize') void import('./oauth/consent').then(({ Consent }) => render(<Consent />, root));
else render(location.pathname === '/setup' ? <Setup /> : <App />, root);
registerServiceWorker();

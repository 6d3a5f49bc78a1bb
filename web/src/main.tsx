import { render } from 'preact';
import { App } from './app';
import { Setup } from './setup/setup';
import { registerServiceWorker } from './shell/register-sw';
import './shared/style.css';

// The first-run page stands apart from the app: its visitor is not signed in yet (web/src/setup/).
render(location.pathname === '/setup' ? <Setup /> : <App />, document.getElementById('app')!);
registerServiceWorker();

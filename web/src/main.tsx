import { render } from 'preact';
import { App } from './app';
import { registerServiceWorker } from './shell/register-sw';
import './shared/style.css';

render(<App />, document.getElementById('app')!);
registerServiceWorker();

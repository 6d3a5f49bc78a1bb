import { render } from 'preact';
import { App } from './app';
import './shared/style.css';

render(<App />, document.getElementById('app')!);

import { render } from 'preact';
render(<main>Parley</main>, document.getElementById('app')!);

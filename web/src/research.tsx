import './research.css';
/** Deep research: start one, follow it live, read the report (being built). */
export function Research({ id }: { id?: string }) {
  return <section class="page" aria-labelledby="research-title"><h2 id="research-title">Research</h2>{id ? <p>{id}</p> : null}</section>;
}

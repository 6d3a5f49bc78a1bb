import './admin.css';
/** Administration for admin users (being built). */
export function Admin() {
  return <section class="page" aria-labelledby="admin-title"><h2 id="admin-title">Admin</h2></section>;
}

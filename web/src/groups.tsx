import './groups.css';
/** Group chats (being built). */
export function Groups() {
  return <section class="page" aria-labelledby="groups-title"><h2 id="groups-title">Groups</h2></section>;
}
export function Group({ id }: { id: string }) {
  return <section class="page" aria-labelledby="group-title"><h2 id="group-title">Group</h2><p>{id}</p></section>;
}
export function JoinGroup({ token }: { token: string }) {
  return <section class="page" aria-labelledby="join-title"><h2 id="join-title">Join a group</h2><p>{token}</p></section>;
}

import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';

/** On the sign-in page of a server with no admin yet: where the way in is (the setup link, or the CLI). */
export function SetupNotice() {
  const [needed, setNeeded] = useState(false);
  useEffect(() => {
    call<{ needsSetup: boolean }>('setup/getStatus').then((r) => setNeeded(r.needsSetup), () => undefined);
  }, []);
  if (!needed) return null;
  return (
    <p role="status" class="setup-notice">
      Parley has no admin yet. Open the setup link that <code>parley serve</code> printed in its terminal, or make a new one with <code>parley setup-link</code>.
    </p>
  );
}

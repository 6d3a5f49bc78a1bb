import type { Config } from '../config';
import type { Store } from '../db/work';
import { listConnectionRows, updateConnectionRow } from './connection.store';
import { createSealer, rotateKeyFile, SealError } from './seal';
import { ConnectionRefusal } from './connection.service';
import type { Connections } from './resolver';

/**
 * `parley connection rotate-key` (docs/connections.md, "Rotating the key"): with the key file, a
 * new key is made and the old one kept readable in `secret.key.previous`; with
 * `PARLEY_SECRET_KEY`, the key set there is the new one. Then every credential sealed with
 * another key is opened and sealed again with the current one.
 */
export async function rotateCredentials(deps: { config: Config; store: Store; connections: Connections; now: () => number }) {
  const { config } = deps;
  try {
    if (!config.secretKey) rotateKeyFile(config);
  } catch (err) {
    if (err instanceof SealError) throw new ConnectionRefusal(err.message);
    throw err;
  }
  // Read the keys anew: the file just changed.
  const sealer = createSealer(config);
  const rows = await deps.store.read((tx) => listConnectionRows(tx));
  let resealed = 0;
  for (const row of rows) {
    if (!row.credential || (await sealer.isCurrent(row.credential))) continue;
    let plain: string;
    try {
      plain = await sealer.open(row.credential);
    } catch (err) {
      throw new ConnectionRefusal(`${row.name}: ${(err as Error).message}`);
    }
    const sealed = await sealer.seal(plain);
    await deps.store.write((tx) => updateConnectionRow(tx, row.id, { credential: sealed }, deps.now()));
    resealed++;
  }
  deps.connections.changed();
  return { resealed, keyId: await sealer.currentKeyId(), newKeyFile: !config.secretKey };
}

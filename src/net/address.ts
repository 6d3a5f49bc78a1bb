import { isIP } from 'node:net';
import ipv4Special from './iana/ipv4-special-registry.csv' with { type: 'text' };
import ipv6Special from './iana/ipv6-special-registry.csv' with { type: 'text' };
import addressSpace from './iana/address-space.csv' with { type: 'text' };

/**
 * Addresses a server-side fetch must not reach unless configured, derived from IANA's registries
 * rather than a hand list (a hand list missed 64:ff9b:1::/48, RFC 8215's local-use NAT64 prefix):
 *
 * - src/net/iana/ipv4-special-registry.csv and ipv6-special-registry.csv: the IPv4 and IPv6
 *   Special-Purpose Address Registries (RFC 6890), their rows and "Globally Reachable" column as
 *   published in 2026. To follow a new edition, replace the rows; the tests walk every one.
 * - src/net/iana/address-space.csv: what those registries leave to the Address Space
 *   registries: IPv4 multicast, and that IPv6 unicast on the internet is 2000::/3 only.
 *
 * An address is judged by the most specific row that holds it (192.0.0.9/32 is reachable inside
 * the unreachable 192.0.0.0/24), and is refused unless that row says "True": "False" and "N/A"
 * (6to4, Teredo, the old ORCHID prefix) are refused alike. IPv4 outside every row is public.
 * Two IPv6 forms stand for an IPv4 address, which is judged too: an IPv4-mapped address
 * (::ffff:a.b.c.d) is a spelling of that IPv4 address, judged as it alone; a NAT64 address of the
 * well-known prefix 64:ff9b::/96 (globally reachable) reaches its IPv4 address through the
 * translator, so that must be public as well (64:ff9b::a9fe:a9fe is the metadata service).
 */

export interface AddressRow {
  /** As the registry writes it: `192.0.0.0/24`. */
  block: string;
  name: string;
  rfc: string;
  /** The registry's "Globally Reachable": only `True` lets a fetch through. */
  reachable: 'True' | 'False' | 'N/A';
  family: 4 | 6;
  base: bigint;
  bits: number;
}

/** The fields of one CSV line (quoted fields with `""` escapes, as IANA publishes them). */
function csvFields(line: string): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') out.push(field), (field = '');
    else field += c;
  }
  return [...out, field];
}

function rowsOf(csv: string): AddressRow[] {
  const [header, ...lines] = csv.trim().split(/\r?\n/);
  const at = Object.fromEntries(csvFields(header!).map((name, i) => [name, i]));
  return lines.map((line) => {
    const f = csvFields(line);
    const block = f[at['Address Block']!]!;
    const [ip, bits] = block.split('/') as [string, string];
    const family = isIP(ip) as 4 | 6;
    const reachable = f[at['Globally Reachable']!]!;
    if (!family || !['True', 'False', 'N/A'].includes(reachable)) throw new Error(`unreadable address registry row: ${line}`);
    return { block, name: f[at.Name!]!, rfc: f[at.RFC!]!, reachable: reachable as AddressRow['reachable'], family, base: valueOf(ip, family), bits: Number(bits) };
  });
}

/** Expand an IPv6 address to its 8 groups (numbers). */
function ipv6Groups(ip: string): number[] {
  let s = ip.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    s = s.slice(0, -v4[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g || '0', 16));
}

/** The address as a number: 32 bits for IPv4, 128 for IPv6. */
function valueOf(ip: string, family: 4 | 6): bigint {
  const parts = family === 4 ? ip.split('.').map(Number) : ipv6Groups(ip);
  const width = BigInt(family === 4 ? 8 : 16);
  return parts.reduce((n, p) => (n << width) | BigInt(p), 0n);
}

/** Every row: the two special-purpose registries, then the address-space rows. */
export const addressRows: readonly AddressRow[] = [...rowsOf(ipv4Special), ...rowsOf(ipv6Special), ...rowsOf(addressSpace)];

const width = (family: 4 | 6) => (family === 4 ? 32 : 128);
const inRow = (row: AddressRow, family: 4 | 6, n: bigint) => row.family === family && n >> BigInt(width(family) - row.bits) === row.base >> BigInt(width(family) - row.bits);

/** The most specific row holding the address, if any. */
export function rowOf(family: 4 | 6, n: bigint): AddressRow | undefined {
  let best: AddressRow | undefined;
  for (const row of addressRows) if (inRow(row, family, n) && (!best || row.bits > best.bits)) best = row;
  return best;
}

/** A registry row by its block; the forms below are the registry's own rows, so losing one fails at start. */
function row(block: string): AddressRow {
  const found = addressRows.find((r) => r.block === block);
  if (!found) throw new Error(`the address registry has no row ${block}`);
  return found;
}
const MAPPED = row('::ffff:0:0/96');
const NAT64 = row('64:ff9b::/96');

const reachable4 = (n: bigint) => (rowOf(4, n)?.reachable ?? 'True') === 'True';

/** True for loopback, private, link-local and every other address not globally reachable (and for anything that is not an IP). */
export function isPrivateAddress(ip: string): boolean {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return !reachable4(valueOf(bare, 4));
  if (family !== 6) return true;
  const n = valueOf(bare, 6);
  const low32 = n & 0xffffffffn;
  if (inRow(MAPPED, 6, n)) return !reachable4(low32);
  if (rowOf(6, n)?.reachable !== 'True') return true;
  return inRow(NAT64, 6, n) && !reachable4(low32);
}

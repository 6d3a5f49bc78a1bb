import { describe, expect, test } from 'bun:test';
import { addressRows, isPrivateAddress, rowOf, type AddressRow } from '../src/net/address';
import { safeFetch, SafeFetchError, type LookupAnswer } from '../src/net/safe-fetch';

/**
 * The SSRF guard's blocked set is IANA's special-purpose registries (src/net/iana/): every row is
 * walked here, the addresses at both ends of each range and, where that means something, the
 * ones just outside it. `64:ff9b:1::/48` (RFC 8215) was missing from the hand list this replaced.
 */

const width = (r: AddressRow) => (r.family === 4 ? 32 : 128);
const text = (family: 4 | 6, n: bigint): string =>
  family === 4
    ? [24n, 16n, 8n, 0n].map((s) => Number((n >> s) & 255n)).join('.')
    : Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
const first = (r: AddressRow) => (r.base >> BigInt(width(r) - r.bits)) << BigInt(width(r) - r.bits);
const last = (r: AddressRow) => first(r) | ((1n << BigInt(width(r) - r.bits)) - 1n);

describe('the blocked set: IANA special-purpose registries', () => {
  test('the tables are the registries: every row has a block, a name, an RFC and a reachability', () => {
    expect(addressRows.filter((r) => r.family === 4).length).toBeGreaterThanOrEqual(26);
    expect(addressRows.filter((r) => r.family === 6).length).toBeGreaterThanOrEqual(25);
    for (const r of addressRows) {
      expect({ block: r.block, rfc: /^\[RFC\d+\]/.test(r.rfc), name: r.name.length > 0 }).toEqual({ block: r.block, rfc: true, name: true });
      expect(r.bits).toBeLessThanOrEqual(width(r));
    }
    const block = (b: string) => addressRows.find((r) => r.block === b);
    expect(block('64:ff9b:1::/48')).toMatchObject({ reachable: 'False', rfc: '[RFC8215]' });
    expect(block('64:ff9b::/96')).toMatchObject({ reachable: 'True', rfc: '[RFC6052]' });
  });

  test('every range not globally reachable is refused at both ends; every reachable one lets its addresses through', () => {
    const wrong: string[] = [];
    for (const r of addressRows) {
      for (const n of [first(r), last(r)]) {
        // An end that a more specific row holds is that row's to judge (192.0.0.0/24 starts with 192.0.0.0/29).
        if (rowOf(r.family, n) !== r) continue;
        let ip = text(r.family, n);
        // A NAT64 address reaches the IPv4 address it carries: judge the range with a public one in it.
        if (r.block === '64:ff9b::/96') ip = text(6, first(r) | 0x08080808n);
        const refused = isPrivateAddress(ip);
        if (refused !== (r.reachable !== 'True')) wrong.push(`${r.block} (${r.name}, ${r.reachable}): ${ip} ${refused ? 'refused' : 'allowed'}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test('64:ff9b:1::/48 (RFC 8215, local-use NAT64) is refused, as research fetched http://[64:ff9b:1::a9fe:a9fe]/', () => {
    for (const ip of ['64:ff9b:1::a9fe:a9fe', '64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', '64:ff9b:1:a9:fe00:a9fe::', '[64:ff9b:1::a9fe:a9fe]', '64:FF9B:1::A9FE:A9FE', '64:ff9b:1::169.254.169.254'])
      expect({ ip, refused: isPrivateAddress(ip) }).toEqual({ ip, refused: true });
  });

  test('the neighbours just outside each range are public where that means something (inside 2000::/3 for IPv6)', () => {
    const cases: [string, boolean][] = [
      // [address, refused]
      ['1.0.0.0', false], // after 0.0.0.0/8
      ['9.255.255.255', false], ['10.0.0.0', true], ['10.255.255.255', true], ['11.0.0.0', false],
      ['100.63.255.255', false], ['100.64.0.0', true], ['100.127.255.255', true], ['100.128.0.0', false],
      ['126.255.255.255', false], ['127.0.0.0', true], ['127.255.255.255', true], ['128.0.0.0', false],
      ['169.253.255.255', false], ['169.254.0.0', true], ['169.254.255.255', true], ['169.255.0.0', false],
      ['172.15.255.255', false], ['172.16.0.0', true], ['172.31.255.255', true], ['172.32.0.0', false],
      ['191.255.255.255', false], ['192.0.0.0', true], ['192.0.0.7', true], ['192.0.0.8', true], ['192.0.0.9', false], ['192.0.0.10', false], ['192.0.0.11', true], ['192.0.0.170', true], ['192.0.0.171', true], ['192.0.0.255', true], ['192.0.1.0', false],
      ['192.0.1.255', false], ['192.0.2.0', true], ['192.0.2.255', true], ['192.0.3.0', false],
      ['192.31.196.1', false], ['192.52.193.1', false], ['192.175.48.1', false],
      ['192.88.98.255', false], ['192.88.99.0', true], ['192.88.99.2', true], ['192.88.99.255', true], ['192.88.100.0', false],
      ['192.167.255.255', false], ['192.168.0.0', true], ['192.168.255.255', true], ['192.169.0.0', false],
      ['198.17.255.255', false], ['198.18.0.0', true], ['198.19.255.255', true], ['198.20.0.0', false],
      ['198.51.99.255', false], ['198.51.100.0', true], ['198.51.100.255', true], ['198.51.101.0', false],
      ['203.0.112.255', false], ['203.0.113.0', true], ['203.0.113.255', true], ['203.0.114.0', false],
      ['223.255.255.255', false], ['224.0.0.0', true], ['239.255.255.255', true], ['240.0.0.0', true], ['255.255.255.254', true], ['255.255.255.255', true],
      ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true], ['2000::', false],
      ['2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false], ['2001::', true], ['2001:0:ffff::1', true], ['2001:1::', true], ['2001:1::1', false], ['2001:1::2', false], ['2001:1::3', false], ['2001:1::4', true],
      ['2001:2::', true], ['2001:2:0:ffff::', true], ['2001:3::', false], ['2001:3:ffff:ffff::1', false], ['2001:4:111:ffff::', true], ['2001:4:112::', false], ['2001:4:113::', true],
      ['2001:10::', true], ['2001:1f:ffff::', true], ['2001:20::', false], ['2001:2f:ffff::', false], ['2001:30::', false], ['2001:3f:ffff::', false], ['2001:40::', true],
      ['2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', true], ['2001:200::', false],
      ['2001:db7:ffff:ffff:ffff:ffff:ffff:ffff', false], ['2001:db8::', true], ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', true], ['2001:db9::', false],
      ['2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false], ['2002::', true], ['2002:808:808::1', true], ['2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true], ['2003::', false],
      ['2620:4f:7fff:ffff::', false], ['2620:4f:8000::', false],
      ['3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false], ['3fff::', true], ['3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', true], ['3fff:1000::', false],
      ['3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false], ['4000::', true], ['5f00::1', true], ['fc00::1', true], ['fdff::1', true], ['fe80::1', true], ['febf::1', true], ['fec0::1', true], ['ff02::1', true],
    ];
    expect(cases.filter(([ip, refused]) => isPrivateAddress(ip) !== refused)).toEqual([]);
  });

  test('IPv6 forms that carry an IPv4 address are judged by it too: IPv4-mapped as that address, NAT64 64:ff9b::/96 by both', () => {
    for (const ip of ['::ffff:169.254.169.254', '::ffff:a9fe:a9fe', '::FFFF:127.0.0.1', '::ffff:10.1.2.3', '::ffff:0.0.0.0', '64:ff9b::a9fe:a9fe', '64:ff9b::169.254.169.254', '64:ff9b::7f00:1', '64:ff9b::c0a8:1', '64:ff9b::e000:1', '::127.0.0.1', '::8.8.8.8', 'fe80::1%eth0'])
      expect({ ip, refused: isPrivateAddress(ip) }).toEqual({ ip, refused: true });
    for (const ip of ['::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::808:808', '64:ff9b::8.8.8.8', '64:ff9b::c000:9'])
      expect({ ip, refused: isPrivateAddress(ip) }).toEqual({ ip, refused: false });
  });
});

describe('the blocked set applies to DNS answers and redirects, not just literals', () => {
  const lookup = async (host: string): Promise<LookupAnswer[]> => {
    const table: Record<string, string[]> = {
      'local-nat64.test': ['64:ff9b:1::a9fe:a9fe'],
      'nat64-metadata.test': ['64:ff9b::a9fe:a9fe'],
      'mapped.test': ['::ffff:169.254.169.254'],
      'mixed.test': ['2606:4700:4700::1111', '64:ff9b:1::a9fe:a9fe'],
      'bench.test': ['198.18.0.1'],
    };
    if (!table[host]) throw new Error('ENOTFOUND');
    return table[host].map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const reason = async (url: string, opts = {}) => {
    try {
      await safeFetch(url, { lookup, timeoutMs: 3000, ...opts });
      return 'fetched';
    } catch (err) {
      return err instanceof SafeFetchError ? err.reason : String(err);
    }
  };

  test('a name whose answers (any of them) fall in a refused range is refused before any connection', async () => {
    for (const host of ['local-nat64.test', 'nat64-metadata.test', 'mapped.test', 'mixed.test', 'bench.test']) expect({ host, got: await reason(`http://${host}/`) }).toEqual({ host, got: 'PRIVATE_ADDRESS' });
    expect(await reason('http://[64:ff9b:1::a9fe:a9fe]/')).toBe('PRIVATE_ADDRESS');
  });

  test('a redirect to such an address is refused at its hop', async () => {
    const hop = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Response.redirect('http://[64:ff9b:1::a9fe:a9fe]/latest/meta-data/', 302) });
    try {
      expect(await reason(`http://127.0.0.1:${hop.port}/`, { allowHosts: ['127.0.0.1'] })).toBe('PRIVATE_ADDRESS');
    } finally {
      hop.stop(true);
    }
  });
});

import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { loadConfig, ConfigError } from '../src/config';
import { renderConfigDocs } from '../src/config-docs';

describe('config', () => {
  test('defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ dataDir: './data', host: '127.0.0.1', port: 8787, env: 'production', cookieSecure: false, internalEmailDomain: undefined });
  });

  test('flags win over the environment, the environment over defaults', () => {
    const c = loadConfig({ PARLEY_PORT: '9000', PARLEY_DATA_DIR: '/env', PARLEY_ENV: 'development' }, { '--data-dir': '/flag' });
    expect(c.port).toBe(9000);
    expect(c.dataDir).toBe('/flag');
    expect(c.env).toBe('development');
  });

  test('bad values are refused with the setting named', () => {
    expect(() => loadConfig({ PARLEY_PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ PARLEY_PORT: 'eighty' })).toThrow('PARLEY_PORT');
    expect(() => loadConfig({ PARLEY_ENV: 'staging' })).toThrow('production, development');
    expect(() => loadConfig({ PARLEY_COOKIE_SECURE: 'maybe' })).toThrow('PARLEY_COOKIE_SECURE');
    // Two heartbeat ticks must fit in the server's 60 s idle timeout.
    expect(() => loadConfig({ PARLEY_SSE_HEARTBEAT_S: '26' })).toThrow('PARLEY_SSE_HEARTBEAT_S must be an integer between 1 and 25');
    // Numbers are decimal digits: not hexadecimal, not exponents.
    for (const port of ['0x1F90', '1e3', '8080.0']) expect(() => loadConfig({ PARLEY_PORT: port })).toThrow('PARLEY_PORT');
    expect(loadConfig({ PARLEY_PORT: ' 9000 ' }).port).toBe(9000);
  });

  test('an empty value is no value: the default applies (a KEY= line left in an environment file)', () => {
    const c = loadConfig({ PARLEY_HOST: '', PARLEY_PORT: '', PARLEY_MAX_STREAMS_PER_USER: '', PARLEY_DATA_DIR: '' }, { '--data-dir': '' });
    const defaults = loadConfig({});
    expect([c.host, c.port, c.maxStreamsPerUser, c.dataDir]).toEqual([defaults.host, defaults.port, defaults.maxStreamsPerUser, defaults.dataDir]);
    expect([c.host, c.port, c.maxStreamsPerUser]).toEqual(['127.0.0.1', 8787, 16]);
  });

  test('docs/configuration.md is the generated table', () => {
    expect(readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8')).toBe(renderConfigDocs());
  });

  test('nothing outside src/config.ts and the CLI reads the environment', async () => {
    const glob = new Bun.Glob('src/**/*.ts');
    const offenders: string[] = [];
    for await (const file of glob.scan(new URL('..', import.meta.url).pathname)) {
      if (file === 'src/config.ts') continue;
      const text = await Bun.file(new URL(`../${file}`, import.meta.url)).text();
      if (/process\.env|Bun\.env/.test(text)) offenders.push(file);
    }
    expect(offenders).toEqual([]);
  });
});

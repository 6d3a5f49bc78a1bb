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

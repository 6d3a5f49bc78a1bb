import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { operations } from '../src/app';

describe('docs', () => {
  test('every operation of the route table is documented in docs/', () => {
    const dir = new URL('../docs/', import.meta.url);
    const docs = readdirSync(dir)
      .filter((f) => f.endsWith('.md'))
      .map((f) => readFileSync(new URL(f, dir), 'utf8'))
      .join('\n');
    expect(operations.filter((op) => !docs.includes(op.path)).map((op) => op.path)).toEqual([]);
  });
});

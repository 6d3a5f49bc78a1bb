// Documents into text (src/files/extract): every format from a real document made here, the
// limits, hostile files refused in bounded time and memory, and the chunker.
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { chunkText, extractText, ExtractError, type ExtractLimits, type TextChunk } from '../src/files/extract';
import { docxParts, makeDocx, makeNestedPdf, makePageBombPdf, makePdf, makeStreamBombPdf, makeZipBombDocx } from './fixtures/documents';

// Generous: each PDF starts a worker that parses PDF.js, on machines shared with other work.
setDefaultTimeout(20_000);

const PDF = 'application/pdf';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const MB = 1024 * 1024;

const dir = mkdtempSync(join(tmpdir(), 'parley-extract-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;
async function put(data: Uint8Array | string): Promise<string> {
  const path = join(dir, `doc-${++fileNo}`);
  await Bun.write(path, data);
  return path;
}

async function extract(data: Uint8Array | string, mime: string, limits: Partial<ExtractLimits> = {}) {
  return extractText({ path: await put(data), mime }, limits);
}

/** The refusal, how long it took, and how far the process's RSS rose (sampled every 5 ms). */
async function refusal(data: Uint8Array | string, mime: string, limits: Partial<ExtractLimits> = {}) {
  const path = await put(data);
  Bun.gc(true);
  const before = process.memoryUsage.rss();
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  const started = performance.now();
  const error = await extractText({ path, mime }, limits).then(
    () => undefined,
    (err: unknown) => err,
  );
  const ms = performance.now() - started;
  clearInterval(sample);
  peak = Math.max(peak, process.memoryUsage.rss());
  expect(error).toBeInstanceOf(ExtractError);
  return { error: error as ExtractError, ms, rise: peak - before };
}

describe('extractText: formats', () => {
  test('PDF: the text of every page, in order, with the page count and where each page starts', async () => {
    const pages = [
      ['Grüße aus Köln: page one.', 'Its second line.'],
      ['Page two stands alone.'],
      ['Page three, café au lait.', 'The end.'],
    ];
    const result = await extract(await makePdf(pages), PDF);
    expect(result.pages).toBe(3);
    expect(result.truncated).toBe(false);
    expect(result.text).toBe('Grüße aus Köln: page one.\nIts second line.\n\nPage two stands alone.\n\nPage three, café au lait.\nThe end.');
    expect(result.pageStarts).toEqual([0, result.text.indexOf('Page two'), result.text.indexOf('Page three')]);
  });

  test('DOCX: its paragraphs, a blank line between each, markup characters as text', async () => {
    const result = await extract(makeDocx(['Grüße aus Köln — 東京 😀.', 'Fish & chips <cheap>.', 'Third.']), DOCX);
    expect(result).toEqual({ text: 'Grüße aus Köln — 東京 😀.\n\nFish & chips <cheap>.\n\nThird.', truncated: false });
  });

  test('HTML: scripts and styles dropped, entities decoded, blocks broken into lines and paragraphs', async () => {
    const html = `<!doctype html><html><head><title>Caf&eacute; notes</title><style>p { color: red }</style>
      <script>document.write("<p>not text</p>")</script></head><body>
      <h1>Menu&nbsp;&amp; prices</h1>
      <p>Espresso is   <b>strong</b>.
         Ristretto more so.</p><noscript>Enable scripts</noscript>
      <ul><li>one</li><li>two &#x263A;</li></ul>
      <table><tr><th>Drink</th><th>Price</th></tr><tr><td>Latte</td><td>3 €</td></tr></table>
      <pre>  keep
    this</pre><p>after<br>break</p></body></html>`;
    const result = await extract(html, 'text/html; charset=utf-8');
    expect(result.text).toBe(
      'Café notes\n\nMenu & prices\n\nEspresso is strong. Ristretto more so.\n\none\ntwo ☺\n\nDrink\tPrice\nLatte\t3 €\n\n  keep\n    this\n\nafter\nbreak',
    );
  });

  test('Markdown, plain text and CSV: the text as written (UTF-8, byte-order mark dropped, CRLF to LF)', async () => {
    const markdown = '# Überschrift\n\n- 東京\n- emoji 😀\n\n```js\nconst x = 1;\n```\n';
    expect((await extract(markdown, 'text/markdown')).text).toBe(markdown);
    expect((await extract('\ufeffline one\r\nline two ñ\r\n', 'text/plain')).text).toBe('line one\nline two ñ\n');
    expect((await extract('name,city\r\n"Zoë","Zürich"\r\n', 'text/csv')).text).toBe('name,city\n"Zoë","Zürich"\n');
  });

  test('JSON: re-indented, every token as written (a 64-bit id keeps its digits); JSON Lines one value a line', async () => {
    const json = '{"id":12345678901234567890,"tags":[],"price":2.50,"name":"a \\"quoted\\" {name}","nested":{"ok":true}}';
    expect((await extract(json, 'application/json')).text).toBe(
      '{\n  "id": 12345678901234567890,\n  "tags": [],\n  "price": 2.50,\n  "name": "a \\"quoted\\" {name}",\n  "nested": {\n    "ok": true\n  }\n}',
    );
    expect((await extract('{"a":1}\n{"a":2}\n', 'application/json')).text).toBe('{\n  "a": 1\n}\n{\n  "a": 2\n}');
  });

  test('maxOutputChars: the text is cut there, never inside a surrogate pair, and marked truncated', async () => {
    const text = `${'a'.repeat(9)}😀${'b'.repeat(20)}`;
    expect(await extract(text, 'text/plain', { maxOutputChars: 10 })).toEqual({ text: 'a'.repeat(9), truncated: true });
    const html = await extract(`<p>${'word '.repeat(1000)}</p><p>more</p>`, 'text/html', { maxOutputChars: 100 });
    expect(html.truncated).toBe(true);
    expect(html.text.length).toBeLessThanOrEqual(100);
    const json = await extract(JSON.stringify({ list: Array.from({ length: 1000 }, (_, i) => i) }), 'application/json', { maxOutputChars: 200 });
    expect(json.truncated).toBe(true);
    expect(json.text.length).toBeLessThanOrEqual(200);
  });

  test('a PDF past maxOutputChars: the pages after it are not read, and only the pages shown are listed', async () => {
    const pages = Array.from({ length: 8 }, (_, p) => [`Page ${p + 1} ${'text '.repeat(20)}`]);
    const result = await extract(await makePdf(pages), PDF, { maxOutputChars: 250 });
    expect(result.truncated).toBe(true);
    expect(result.pages).toBe(8);
    expect(result.text.length).toBe(250);
    expect(result.text).toStartWith('Page 1 ');
    expect(result.pageStarts!.length).toBeLessThan(8);
    expect(result.pageStarts!.every((start) => start < result.text.length)).toBe(true);
  });
});

describe('extractText: refusals', () => {
  test('an unsupported type is refused before anything is read', async () => {
    for (const mime of ['image/png', 'application/msword', 'application/zip', '']) {
      const { error } = await refusal('whatever', mime);
      expect(error.code).toBe('unsupported');
      expect(error.message).toContain('PDF, Word (.docx), HTML, Markdown, plain text, CSV and JSON');
    }
  });

  test('a file over maxInputBytes is refused by its size', async () => {
    const { error } = await refusal('x'.repeat(2000), 'text/plain', { maxInputBytes: 1000 });
    expect(error.code).toBe('too_large');
    expect(error.message).toBe('The file is 2 KB; at most 1000 bytes can be read.');
  });

  test('random bytes claiming to be a PDF, a DOCX or text are damaged', async () => {
    const noise = crypto.getRandomValues(new Uint8Array(64 * 1024));
    for (const mime of [PDF, DOCX, 'text/plain', 'text/html']) {
      const { error, ms } = await refusal(noise, mime);
      expect(error.code).toBe('damaged');
      expect(ms).toBeLessThan(5000);
    }
    const truncatedPdf = (await makePdf([['cut short']])).subarray(0, 300);
    expect((await refusal(truncatedPdf, PDF)).error.code).toBe('damaged');
    const zipWithoutDocument = zipSync({ 'readme.txt': strToU8('not a Word document') });
    expect((await refusal(zipWithoutDocument, DOCX)).error.message).toContain("isn't a readable Word document");
  });

  test('a password-protected DOCX entry is refused as unsupported', async () => {
    const docx = makeDocx(['secret']);
    const v = new DataView(docx.buffer, docx.byteOffset);
    const directory = v.getUint32(docx.length - 22 + 16, true);
    v.setUint16(directory + 8, v.getUint16(directory + 8, true) | 1, true);
    const { error } = await refusal(docx, DOCX);
    expect(error.code).toBe('unsupported');
    expect(error.message).toContain('password-protected');
  });
});

describe('extractText: hostile files, refused in bounded time and memory', () => {
  test('a PDF of 100,000 pages: refused by its page count, before a page is read', async () => {
    const { error, ms, rise } = await refusal(await makePageBombPdf(100_000), PDF);
    expect(error.code).toBe('too_large');
    expect(error.message).toBe('The PDF has 100000 pages; at most 1000 can be read.');
    expect(ms).toBeLessThan(10_000);
    expect(rise).toBeLessThan(112 * MB);
  });

  test('a PDF whose one content stream inflates to 1 GB: stopped at the memory limit', async () => {
    const limits = { maxMemoryBytes: 64 * MB };
    const { error, ms, rise } = await refusal(await makeStreamBombPdf(1024), PDF, limits);
    expect(error.code).toBe('too_large');
    expect(error.message).toBe('Reading the document needed more than 64 MB of memory, the most allowed.');
    expect(ms).toBeLessThan(10_000);
    // The RSS is read every 10 ms; the parser inflates ~150 MB/s.
    expect(rise).toBeLessThan(limits.maxMemoryBytes + 48 * MB);
  });

  test('the same stream bomb with the memory limit lifted: ended at the time limit', async () => {
    const { error, ms } = await refusal(await makeStreamBombPdf(1024), PDF, { maxMemoryBytes: 4096 * MB, timeoutMs: 300 });
    expect(error.code).toBe('timeout');
    expect(error.message).toBe('Reading the document took longer than 0.3 s; it may be too complex, or damaged.');
    expect(ms).toBeGreaterThanOrEqual(295);
    expect(ms).toBeLessThan(3000);
  });

  test('a PDF nested 100,000 arrays deep: damaged, not a crash', async () => {
    const { error, ms } = await refusal(makeNestedPdf(100_000), PDF);
    expect(error.code).toBe('damaged');
    expect(ms).toBeLessThan(10_000);
  });

  test('a DOCX declaring 1 GB (and holding it, ~1 MB compressed): refused before inflating', async () => {
    const { error, ms, rise } = await refusal(await makeZipBombDocx(1024), DOCX);
    expect(error.code).toBe('too_large');
    expect(error.message).toBe('The document unpacks to more than 100 MB, the most that can be read.');
    expect(ms).toBeLessThan(5000);
    expect(rise).toBeLessThan(48 * MB);
  });

  test('a DOCX whose document part declares 5 KB but holds 200 MB: caught at its declared size', async () => {
    const { error, ms, rise } = await refusal(await makeZipBombDocx(200, 5000), DOCX);
    expect(error.code).toBe('damaged');
    expect(error.message).toContain('"word/document.xml" does not unpack to its declared size');
    expect(ms).toBeLessThan(5000);
    expect(rise).toBeLessThan(48 * MB);
  });

  test('a DOCX whose text part unpacks past an eighth of the memory limit: refused from the directory, before anything is inflated', async () => {
    const huge = makeDocx(['a'.repeat(15 * MB)]);
    const { error, ms, rise } = await refusal(huge, DOCX);
    expect(error.code).toBe('too_large');
    expect(error.message).toBe('The document\'s part "word/document.xml" unpacks to 15 MB; at most 14 MB can be read.');
    expect(ms).toBeLessThan(5000);
    expect(rise).toBeLessThan(48 * MB);
    // The share follows the memory limit.
    expect((await refusal(makeDocx(['a'.repeat(3 * MB)]), DOCX, { maxMemoryBytes: 16 * MB })).error.message).toContain('at most 2 MB can be read');
  });

  test('a DOCX of 5,000 entries: refused by its entry count', async () => {
    const files: Record<string, Uint8Array> = {};
    for (const [name, xml] of Object.entries(docxParts(['many']))) files[name] = strToU8(xml);
    for (let i = 0; i < 5000; i++) files[`word/media/x${i}.bin`] = new Uint8Array([i & 255]);
    const { error } = await refusal(zipSync(files, { level: 0 }), DOCX);
    expect(error.code).toBe('too_large');
    expect(error.message).toBe('The document has more than 2000 parts, the most that can be read.');
  });

  test('an HTML page of 1,000,000 nested elements: linear time, within the memory limit or refused by it', async () => {
    const n = 1_000_000;
    const path = await put(`${'<div>'.repeat(n)}deep${'</div>'.repeat(n)}`);
    const started = performance.now();
    const outcome = await extractText({ path, mime: 'text/html' }).then(
      (result) => result.text,
      (err: ExtractError) => err.code,
    );
    expect(['deep', 'too_large']).toContain(outcome);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  test('in a process of its own, the stream bomb peaks well under 200 MB of RSS', async () => {
    const path = await put(await makeStreamBombPdf(1024));
    const child = Bun.spawn([process.execPath, join(import.meta.dir, 'fixtures/extract-peak.ts'), path, PDF], { stdout: 'pipe' });
    const report = JSON.parse(await new Response(child.stdout).text());
    expect(await child.exited).toBe(0);
    expect(report.code).toBe('too_large');
    expect(report.peakBytes).toBeLessThan(200 * MB);
  });
});

describe('extractText: compiled', () => {
  test('inside a compiled executable (the worker built as an entry point of its own, as scripts/build.ts does)', async () => {
    const out = join(dir, 'extract-bin');
    const build = Bun.spawn(
      [process.execPath, 'build', '--compile', '--bytecode', '--format', 'esm', '--minify-syntax', '--minify-whitespace', '--entry-naming', '[name].[ext]',
        'test/fixtures/extract-peak.ts', 'src/files/extract/extract-worker.ts', '--outfile', out],
      { cwd: join(import.meta.dir, '..'), stdout: 'pipe', stderr: 'pipe' },
    );
    if ((await build.exited) !== 0) expect(await new Response(build.stderr).text()).toBe('');
    const run = async (data: Uint8Array, mime: string) => {
      const child = Bun.spawn([out, await put(data), mime], { cwd: tmpdir(), stdout: 'pipe' });
      expect(await child.exited).toBe(0);
      return JSON.parse(await new Response(child.stdout).text());
    };
    expect(await run(await makePdf([['Compiled page one.'], ['Page two.']]), PDF)).toMatchObject({ ok: true, text: 'Compiled page one.\n\nPage two.', pages: 2 });
    expect(await run(makeDocx(['Compiled Wörd.']), DOCX)).toMatchObject({ ok: true, text: 'Compiled Wörd.' });
    const bomb = await run(await makeStreamBombPdf(1024), PDF);
    expect(bomb).toMatchObject({ ok: false, code: 'too_large' });
    expect(bomb.peakBytes).toBeLessThan(200 * MB);
  }, 60_000);
});

describe('chunkText', () => {
  const sentence = (i: number) => `Sentence number ${i} says a few words about it.`;
  const paragraph = (p: number, sentences = 5) => Array.from({ length: sentences }, (_, i) => sentence(p * 10 + i)).join(' ');

  /** The invariants of any chunking: each chunk is its slice, bounded, trimmed and in order. */
  function expectWellFormed(text: string, chunks: TextChunk[], targetChars: number) {
    let lastStart = -1;
    let lastEnd = 0;
    for (const chunk of chunks) {
      expect(text.slice(chunk.start, chunk.end)).toBe(chunk.text);
      expect(chunk.text.length).toBeLessThanOrEqual(targetChars);
      expect(chunk.text.length).toBeGreaterThan(0);
      expect(chunk.text.trim()).toBe(chunk.text);
      expect(chunk.start).toBeGreaterThan(lastStart);
      expect(chunk.end).toBeGreaterThan(lastEnd);
      lastStart = chunk.start;
      lastEnd = chunk.end;
    }
  }

  test('splits at paragraph breaks when a paragraph ends in the window', () => {
    const paragraphs = Array.from({ length: 6 }, (_, p) => paragraph(p));
    const text = paragraphs.join('\n\n');
    const chunks = chunkText(text, { targetChars: 600, overlapChars: 0 });
    expectWellFormed(text, chunks, 600);
    // ~240 characters a paragraph: two whole paragraphs a chunk.
    expect(chunks.map((c) => c.text)).toEqual([0, 2, 4].map((p) => `${paragraphs[p]}\n\n${paragraphs[p + 1]}`));
  });

  test('without paragraphs, splits after a sentence; overlap starts at a sentence', () => {
    const text = paragraph(0, 40);
    const chunks = chunkText(text, { targetChars: 300, overlapChars: 100 });
    expectWellFormed(text, chunks, 300);
    expect(chunks.length).toBeGreaterThan(5);
    for (const [i, chunk] of chunks.entries()) {
      expect(chunk.text).toStartWith('Sentence number');
      if (i < chunks.length - 1) expect(chunk.text).toEndWith('.');
      const next = chunks[i + 1];
      if (next) {
        expect(next.start).toBeLessThan(chunk.end);
        expect(chunk.end - next.start).toBeLessThanOrEqual(100);
      }
    }
  });

  test('an unbroken run is cut at the target, never inside a surrogate pair', () => {
    const text = '😀'.repeat(100);
    const chunks = chunkText(text, { targetChars: 51, overlapChars: 0 });
    expectWellFormed(text, chunks, 51);
    expect(chunks.map((c) => c.text.length)).toEqual([50, 50, 50, 50]);
  });

  test('chunks of a PDF carry the pages they start and end on', async () => {
    const pages = Array.from({ length: 4 }, (_, p) => [paragraph(p, 3)]);
    const { text, pageStarts } = await extract(await makePdf(pages), PDF);
    const chunks = chunkText(text, { targetChars: 200, overlapChars: 40, pageStarts });
    expectWellFormed(text, chunks, 200);
    expect(chunks[0]!.page).toBe(1);
    expect(chunks.at(-1)!.endPage).toBe(4);
    // Pages are separated by a blank line and hold none: a chunk's page is the one whose text
    // runs, without a blank line, up to the chunk's first (or last) character.
    const pageOf = (offset: number) => text.slice(0, offset + 1).split('\n\n').length;
    expect(chunks.some((c) => c.endPage !== c.page)).toBe(true);
    for (const chunk of chunks) {
      expect(chunk.page).toBe(pageOf(chunk.start));
      expect(chunk.endPage).toBe(pageOf(chunk.end - 1));
    }
  });

  test('deterministic, and every non-space character is in some chunk, whatever the text', () => {
    const piece = fc.constantFrom('word', ' ', '. ', '\n', '\n\n', 'é', '😀', '東京。', 'x'.repeat(30));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 200 }), fc.integer({ min: 2, max: 120 }), fc.integer({ min: 0, max: 100 }), (pieces, targetChars, o) => {
        const text = pieces.join('');
        const overlapChars = o % targetChars;
        const chunks = chunkText(text, { targetChars, overlapChars });
        expect(chunkText(text, { targetChars, overlapChars })).toEqual(chunks);
        expectWellFormed(text, chunks, targetChars);
        for (let i = 1; i < chunks.length; i++) expect(chunks[i - 1]!.end - chunks[i]!.start).toBeLessThanOrEqual(overlapChars);
        const covered = new Uint8Array(text.length);
        for (const c of chunks) covered.fill(1, c.start, c.end);
        for (let i = 0; i < text.length; i++) if (!/\s/.test(text[i]!)) expect(covered[i]).toBe(1);
      }),
      { numRuns: 1000 },
    );
  });

  test('a megabyte of text in linear time, however few boundaries it has', () => {
    for (const text of ['abc\n'.repeat(250_000), 'a.'.repeat(500_000), 'x'.repeat(1_000_000)]) {
      const started = performance.now();
      const chunks = chunkText(text, { targetChars: 2000, overlapChars: 200 });
      expect(performance.now() - started).toBeLessThan(300);
      expect(chunks.length).toBeGreaterThan(500);
    }
  });

  test('refuses options that cannot make progress', () => {
    expect(() => chunkText('text', { targetChars: 1, overlapChars: 0 })).toThrow(RangeError);
    expect(() => chunkText('text', { targetChars: 10, overlapChars: 10 })).toThrow(RangeError);
  });
});

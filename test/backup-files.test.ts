/**
 * A backup is the database and its files, consistent with each other (docs/self-hosting.md,
 * "Backups"): `parley backup` puts the blobs its snapshot names in `<name>.files/` (hard links
 * where it can, copies across file systems), `parley restore` puts them back, admin backups keep
 * their `.files` with them, and `parley db copy` / `parley db check-files` say where the files of
 * a copied database are. Files go in through HTTP on a data directory's SQLite file; the CLI runs
 * from source as the binary would.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { SQL } from 'bun';
import { sql } from 'drizzle-orm';
import { Database } from 'bun:sqlite';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transformer } from '@napi-rs/image';
import { createTestContext, describeSqliteOnly, seedUser, until, type TestContext, type TestUser } from './helpers';
import { openDataDir } from '../src/db/connection';
import { updateUser } from '../src/account/account.store';
import { createBackup, KEEP_BACKUPS } from '../src/admin/backups';
import { blobPathIn, blobPlacer, completeBlobBackup, filesDirOf, linkLiveBlobs } from '../src/db/backup-blobs';
import { sweepBlobs } from '../src/files/sweep-blobs';
import { postgresAvailable, startPostgres, type TestPostgres } from './support/postgres';
import { startFakeS3 } from './fakes/s3';

// These tests spawn the CLI; shared machines can be slow, and no test here asserts on time.
setDefaultTimeout(120_000);

const root = new URL('..', import.meta.url).pathname;
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tmp = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `parley-backup-files-${name}-`));
  dirs.push(dir);
  return dir;
};

/** The CLI from source, as the binary runs it. */
function parley(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawnSync([process.execPath, join(root, 'cli/main.ts'), ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

/** The same without blocking this process: for a CLI that talks to a fake server of this process. */
async function parleyAsync(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawn([process.execPath, join(root, 'cli/main.ts'), ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

/** An app on the SQLite file of a fresh data directory (what `parley backup` reads), with Ann and Bob. */
async function setup(name: string) {
  const dataDir = join(tmp(name), 'data');
  const ctx = await createTestContext({ db: openDataDir(dataDir), users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }], config: { dataDir } });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  return { ctx, ann, bob, dataDir, blobDir: join(dataDir, 'files') };
}

async function upload(ctx: TestContext, as: TestUser, bytes: Uint8Array | string, filename: string): Promise<{ id: string; kind: string }> {
  const form = new FormData();
  form.append('file', new Blob([bytes]), filename);
  const res = await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': as.key }, body: form }));
  expect(res.status).toBe(200);
  const file = (await res.json()) as { id: string; kind: string };
  // A document's text is read after the answer: let it finish before the database is copied or closed.
  if (file.kind === 'document') await until(async () => (await ctx.json('files/getFile', { fileId: file.id }, as)).body.textStatus !== 'pending', 'the text', 15_000);
  return file;
}

async function download(ctx: TestContext, as: TestUser, path: string): Promise<{ status: number; bytes: Uint8Array }> {
  const res = await ctx.app.handle(new Request(`http://localhost${path}`, { headers: { 'x-api-key': as.key } }));
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** Delete a file and wait for the sweep (the one the deletion starts, or this one) to remove its bytes. */
async function deleteFile(ctx: TestContext, as: TestUser, fileId: string) {
  expect((await ctx.json('files/deleteFile', { fileId }, as)).status).toBe(200);
  await sweepBlobs(ctx.deps);
  const blobDir = join(ctx.deps.config.dataDir, 'files');
  await until(async () => {
    const named = new Set((await ctx.query<{ key: string }>(sql`SELECT sha256 || '-' || created_at AS key FROM file_blobs`)).map((r) => r.key));
    return [...blobsUnder(blobDir).keys()].every((key) => named.has(key) || key.startsWith('ffff'));
  }, 'the sweep');
}

const png = (w: number, h: number, shade: number) => new Transformer(Transformer.fromRgbaPixels(new Uint8Array(w * h * 4).fill(shade), w, h).pngSync()).pngSync();

/** The blobs under a blob directory (`ab/cd/<key>`): key → path. */
function blobsUnder(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  if (!existsSync(dir)) return found;
  for (const a of readdirSync(dir)) {
    if (a === 'tmp') continue;
    for (const b of readdirSync(join(dir, a))) for (const key of readdirSync(join(dir, a, b))) found.set(key, join(dir, a, b, key));
  }
  return found;
}

/** The keys of the blobs a database names. */
function keysOf(file: string): string[] {
  const db = new Database(file, { readonly: true });
  const keys = db.query<{ key: string }, []>("SELECT sha256 || '-' || created_at AS key FROM file_blobs ORDER BY 1").all().map((r) => r.key);
  db.close();
  return keys;
}

const sorted = (keys: Iterable<string>) => [...keys].sort();

describeSqliteOnly('backups with files', () => {
  test('parley backup: the blobs its snapshot names, hard-linked beside it; deleted and swept, restore puts them back and they download byte for byte', async () => {
    const { ctx, ann, bob, dataDir, blobDir } = await setup('story');
    const photo = await upload(ctx, ann, png(40, 30, 200), 'photo.png'); // and its thumbnail: two blobs
    const notes = await upload(ctx, ann, 'meeting notes\nthe octopus has three hearts\n', 'notes.txt');
    const same = await upload(ctx, bob, 'meeting notes\nthe octopus has three hearts\n', 'copy.txt'); // stored once
    const gone = await upload(ctx, ann, 'deleted before the backup\n', 'gone.txt');
    await deleteFile(ctx, ann, gone.id);
    // An object no row names (an upload killed before its row was written): not part of a backup.
    const stray = blobPathIn(blobDir, `${'f'.repeat(64)}-1`);
    mkdirSync(join(stray, '..'), { recursive: true });
    writeFileSync(stray, 'stray');
    const live = keysOf(join(dataDir, 'parley.db'));
    expect(live).toHaveLength(3);
    const before = {
      photo: (await download(ctx, ann, `/api/files/${photo.id}/content`)).bytes,
      thumb: (await download(ctx, ann, `/api/files/${photo.id}/thumbnail`)).bytes,
      notes: (await download(ctx, ann, `/api/files/${notes.id}/content`)).bytes,
    };

    // Taken while the server runs, as the timer does.
    const backups = tmp('story-backups');
    const target = join(backups, 'nightly.db');
    const made = parley(['backup', target, '--data-dir', dataDir, '--json']);
    expect(made).toMatchObject({ code: 0, err: '' });
    const report = JSON.parse(made.out);
    const filesDir = join(backups, 'nightly.files');
    expect(report).toEqual({
      file: target,
      files: { storage: 'disk', filesDir, blobs: 3, bytes: expect.any(Number), how: 'link', missing: 0, missingKeys: [] },
    });
    expect(sorted(readdirSync(backups))).toEqual(['nightly.db', 'nightly.files']);
    expect((statSync(filesDir).mode & 0o777).toString(8)).toBe('700');
    // Exactly the blobs the copy names, the same bytes, the same inodes (no space taken).
    const backedUp = blobsUnder(filesDir);
    expect(sorted(backedUp.keys())).toEqual(keysOf(target));
    expect(keysOf(target)).toEqual(live);
    let bytes = 0;
    for (const [key, path] of backedUp) {
      const original = blobPathIn(blobDir, key);
      expect(readFileSync(path).equals(readFileSync(original))).toBe(true);
      expect(statSync(path).ino).toBe(statSync(original).ino);
      bytes += statSync(path).size;
    }
    expect(report.files.bytes).toBe(bytes);
    // The human form says where and how.
    const human = parley(['backup', join(backups, 'again.db'), '--data-dir', dataDir]);
    expect(human.out).toBe(`backup written to ${join(backups, 'again.db')}\nfiles: 3 stored file(s), ${(bytes / 1e6).toFixed(1)} MB, in ${join(backups, 'again.files')} (hard links: no extra space)\n`);
    // FILE.files in the way: refused, nothing written.
    mkdirSync(join(backups, 'taken.files'));
    const taken = parley(['backup', join(backups, 'taken.db'), '--data-dir', dataDir]);
    expect(taken.code).not.toBe(0);
    expect(taken.err).toContain(`${join(backups, 'taken.files')} already exists`);
    expect(existsSync(join(backups, 'taken.db'))).toBe(false);

    // Another file system (a memory one): copies, private, the same bytes.
    const shm = '/dev/shm';
    if (existsSync(shm) && statSync(shm).dev !== statSync(blobDir).dev) {
      const other = mkdtempSync(join(shm, 'parley-backup-files-'));
      dirs.push(other);
      const copied = parley(['backup', join(other, 'usb.db'), '--data-dir', dataDir, '--json']);
      expect(copied.code).toBe(0);
      expect(JSON.parse(copied.out).files).toMatchObject({ blobs: 3, how: 'copy', missing: 0 });
      for (const [key, path] of blobsUnder(join(other, 'usb.files'))) {
        expect(readFileSync(path).equals(readFileSync(blobPathIn(blobDir, key)))).toBe(true);
        expect(statSync(path).ino).not.toBe(statSync(blobPathIn(blobDir, key)).ino);
        expect((statSync(path).mode & 0o777).toString(8)).toBe('600');
      }
      expect(sorted(blobsUnder(join(other, 'usb.files')).keys())).toEqual(live);
    } else console.warn('no second file system: the copy path is not exercised');

    // Files kept in a bucket: the database alone, and it says so.
    const s3 = parley(['backup', join(backups, 'bucket.db'), '--data-dir', dataDir], { PARLEY_FILES_S3_BUCKET: 'family-files' });
    expect(s3.code).toBe(0);
    expect(s3.out).toContain('files: not in this backup; they are in the bucket family-files');
    expect(existsSync(join(backups, 'bucket.files'))).toBe(false);

    // Everything deleted and swept: the bytes are gone from the data directory, not from the backup.
    for (const [as, id] of [[ann, photo.id], [ann, notes.id], [bob, same.id]] as const) await deleteFile(ctx, as, id);
    expect(await ctx.count('file_blobs')).toBe(0);
    expect(sorted(blobsUnder(blobDir).keys())).toEqual([`${'f'.repeat(64)}-1`]);
    expect(sorted(blobsUnder(filesDir).keys())).toEqual(live);

    // A restore refused (the server still has the database open) leaves no blob behind.
    const busy = parley(['restore', target, '--data-dir', dataDir]);
    expect(busy.code).toBe(2);
    expect(busy.err).toContain('is in use');
    expect(sorted(blobsUnder(blobDir).keys())).toEqual([`${'f'.repeat(64)}-1`]);

    // The server stops: its connection is released at once, statements and all.
    ctx.db.$client.close(true);
    const restored = parley(['restore', target, '--data-dir', dataDir, '--json']);
    expect(restored).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(restored.out).files).toEqual({ storage: 'disk', blobs: 3, restored: 3, present: 0, how: 'link', missing: 0, missingKeys: [], filesDir });
    const back = await createTestContext({ db: openDataDir(dataDir), config: { dataDir } });
    expect(await download(back, ann, `/api/files/${photo.id}/content`)).toEqual({ status: 200, bytes: before.photo });
    expect(await download(back, ann, `/api/files/${photo.id}/thumbnail`)).toEqual({ status: 200, bytes: before.thumb });
    expect(await download(back, ann, `/api/files/${notes.id}/content`)).toEqual({ status: 200, bytes: before.notes });
    expect(await download(back, bob, `/api/files/${same.id}/content`)).toEqual({ status: 200, bytes: before.notes });
    back.db.$client.close(true);

    // Again: the blobs are there already. The human form says so.
    await Bun.sleep(1100); // the database it replaces is kept under a name to the second
    const again = parley(['restore', target, '--data-dir', dataDir]);
    expect(again.err).toBe('');
    expect(again.out).toContain(`files: all 3 stored file(s) the backup names are in ${blobDir} already`);

    // A backup from before files were backed up (no .files beside it): restored as before, and
    // what it names that is not in the data directory is reported.
    const old = join(backups, 'old.db');
    cpSync(target, old);
    for (const key of live) rmSync(blobPathIn(blobDir, key));
    await Bun.sleep(1100);
    const older = parley(['restore', old, '--data-dir', dataDir]);
    expect(older.err).toBe('');
    expect(older.code).toBe(0);
    expect(older.out).toContain(`warning: 3 stored file(s) the backup names are neither beside it (no .files directory: a backup from before files were backed up) nor in ${blobDir}`);
    expect(blobsUnder(blobDir).size).toBe(1);
  });

  test('a blob the snapshot names that the sweep removes while the backup runs is in it; the only one left out is counted, not fatal', async () => {
    const { ctx, ann, blobDir } = await setup('race');
    const early = await upload(ctx, ann, 'early bytes\n', 'early.txt');
    const doomed = await upload(ctx, ann, 'deleted between the two steps\n', 'doomed.txt');
    const into = join(tmp('race-into'), 'b.files');
    mkdirSync(into);
    const placer = blobPlacer();
    const sqlite = ctx.db.$client;
    // Step 1: what the live database names now.
    await linkLiveBlobs(sqlite, blobDir, into, placer);
    const [earlyKey, doomedKey] = [early, doomed].map((f) => sqlite.query<{ key: string }, [string]>("SELECT b.sha256 || '-' || b.created_at AS key FROM file_blobs b JOIN files f ON f.sha256 = b.sha256 WHERE f.id = ?").get(f.id)!.key);
    // Deleted before the snapshot: linked by step 1, not named by the snapshot.
    await deleteFile(ctx, ann, doomed.id);
    // Uploaded after step 1: named by the snapshot, not linked yet.
    const late = await upload(ctx, ann, 'late bytes\n', 'late.txt');
    const snapshot = join(tmp('race-snap'), 'b.db');
    sqlite.query('VACUUM INTO ?').run(snapshot);
    const lateKey = keysOf(snapshot).find((k) => k !== earlyKey)!;
    // After the snapshot, both go and the sweep removes their objects.
    await deleteFile(ctx, ann, early.id);
    await deleteFile(ctx, ann, late.id);
    expect(blobsUnder(blobDir).size).toBe(0);

    const snap = new Database(snapshot, { readonly: true });
    const report = await completeBlobBackup(snap, blobDir, into, placer);
    snap.close();
    expect(report).toMatchObject({ blobs: 2, missing: 1, missingKeys: [lateKey!], how: 'link' });
    // The snapshot's early blob is there whole; the one it does not name was removed.
    expect(sorted(blobsUnder(into).keys())).toEqual([earlyKey!]);
    expect(readFileSync(blobPathIn(into, earlyKey!), 'utf8')).toBe('early bytes\n');
    expect(blobsUnder(into).has(doomedKey!)).toBe(false);
    await ctx.close();
  });

  test('a backup killed mid-way leaves nothing under the final names; the next one removes what it left and completes', async () => {
    const { ctx, ann, dataDir } = await setup('killed');
    await upload(ctx, ann, png(20, 20, 90), 'a.png');
    // Enough rows that the copy of the database takes a while.
    ctx.db.$client.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
    ctx.db.$client.exec('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000) INSERT INTO filler (body) SELECT hex(randomblob(64)) FROM n');
    ctx.db.$client.exec('CREATE INDEX filler_body ON filler (body)');
    await ctx.close();
    const backups = tmp('killed-backups');
    const target = join(backups, 'nightly.db');

    const proc = Bun.spawn([process.execPath, join(root, 'cli/main.ts'), 'backup', target, '--data-dir', dataDir], { stdout: 'ignore', stderr: 'ignore', env: { PATH: process.env.PATH ?? '' } });
    // The database copy has started: the blobs are gathered by then.
    const copying = () =>
      readdirSync(backups).some((f) => {
        try {
          return f.startsWith('nightly.db.backup-') && statSync(join(backups, f)).size > 0;
        } catch {
          return false;
        }
      });
    while (proc.exitCode === null && !copying()) await Bun.sleep(2);
    proc.kill('SIGKILL');
    await proc.exited;
    expect(proc.signalCode).toBe('SIGKILL');
    const left = readdirSync(backups);
    expect(left).not.toContain('nightly.db');
    expect(left).not.toContain('nightly.files');
    const partialDir = left.find((f) => f.startsWith('nightly.files.backup-'));
    expect(partialDir).toBeDefined();
    expect(blobsUnder(join(backups, partialDir!)).size).toBe(2);

    const again = parley(['backup', target, '--data-dir', dataDir]);
    expect(again).toMatchObject({ code: 0, err: '' });
    expect(sorted(readdirSync(backups))).toEqual(['nightly.db', 'nightly.files']);
    expect(sorted(blobsUnder(join(backups, 'nightly.files')).keys())).toEqual(keysOf(target));
  });

  test(`admin backups: each with its .files; only the newest ${KEEP_BACKUPS} are kept, their .files with them; a bucket's files are not copied`, async () => {
    const { ctx, ann, dataDir, blobDir } = await setup('admin');
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { isAdmin: true }, Date.now()));
    await upload(ctx, ann, 'kept with every backup\n', 'kept.txt');
    const key = keysOf(join(dataDir, 'parley.db'))[0]!;
    const dir = join(dataDir, 'backups');
    const names: string[] = [];
    for (let i = 0; i < KEEP_BACKUPS + 2; i++) {
      if (i === KEEP_BACKUPS + 1) {
        // A .files whose .db is gone, and a folder that is not a backup's.
        mkdirSync(join(dir, 'parley-2020-01-01T00-00-00-000Z.files'));
        mkdirSync(join(dir, 'mine.files'));
      }
      const made = await ctx.json('admin/createBackup', {}, ann);
      expect(made.status).toBe(200);
      names.push(made.body.backup.name);
    }
    const kept = names.slice(-KEEP_BACKUPS);
    expect(sorted(readdirSync(dir))).toEqual(sorted([...kept, ...kept.map(filesDirOf), 'mine.files']));
    for (const name of kept) {
      const path = blobPathIn(join(dir, filesDirOf(name)), key);
      expect(statSync(path).ino).toBe(statSync(blobPathIn(blobDir, key)).ino);
    }
    const bucket = await createBackup(ctx.db.$client, dataDir, Date.now() + 60_000, 's3');
    expect(existsSync(join(dir, bucket.name))).toBe(true);
    expect(existsSync(join(dir, filesDirOf(bucket.name)))).toBe(false);
    await ctx.close();
  });
});

const run = postgresAvailable();

describe.if(run)('parley db copy and the files', () => {
  let pg: TestPostgres;
  let admin: SQL;
  let n = 0;
  const newDatabase = async () => {
    const name = `files_copy_${++n}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    return pg.url.replace(/\/postgres$/, `/${name}`);
  };

  test('up and down: the rows of the files travel, their bytes stay where the storage is; missing ones reported; check-files --upload fills a bucket', async () => {
    pg = await startPostgres();
    admin = new SQL(pg.url);
    try {
      const { ctx, ann, dataDir: from } = await setup('copy');
      await upload(ctx, ann, png(30, 20, 10), 'p.png');
      await upload(ctx, ann, 'a document\n', 'd.txt');
      await ctx.close();
      const keys = keysOf(join(from, 'parley.db'));
      expect(keys).toHaveLength(3);

      // Up, files on disk: every blob is in the data directory's files/, which one instance keeps using.
      const url = await newDatabase();
      const up = parley(['db', 'copy', '--to', url, '--json', '--data-dir', from]);
      expect(up.err).toBe('');
      const report = JSON.parse(up.out);
      expect(report.files).toMatchObject({ storage: 'disk', blobs: 3, missing: 0, uploaded: 0, where: join(from, 'files') });
      expect(report.tables.find((t: { name: string }) => t.name === 'file_blobs').rows).toBe(3);
      const pgSql = new SQL(url);
      const rows: { key: string }[] = await pgSql`SELECT sha256 || '-' || created_at AS key FROM file_blobs ORDER BY 1`;
      expect(rows.map((r) => r.key)).toEqual(keys);
      await pgSql.close();

      // Down into a data directory without the files: the rows arrive, the bytes are reported missing.
      const to = join(tmp('copy-down'), 'data');
      const down = parley(['db', 'copy', '--from', url, '--data-dir', to]);
      expect(down.err).toBe("");
      expect(down.code).toBe(0);
      expect(down.out).toContain(`warning: 3 of 3 stored file(s) the database names are not in ${join(to, 'files')}`);
      expect(keysOf(join(to, 'parley.db'))).toEqual(keys);
      const check = parley(['db', 'check-files', '--data-dir', to, '--json']);
      expect(check.code).toBe(1);
      expect(JSON.parse(check.out)).toMatchObject({ storage: 'disk', blobs: 3, missing: 3 });
      cpSync(join(from, 'files'), join(to, 'files'), { recursive: true });
      expect(parley(['db', 'check-files', '--data-dir', to])).toMatchObject({ code: 0, out: `the 3 stored file(s) the database names are all in ${join(to, 'files')}\n` });

      // Up to several instances: the files go to a bucket. Missing there at first, then sent.
      const s3 = startFakeS3();
      try {
        const bucketEnv = {
          PARLEY_FILES_S3_BUCKET: s3.bucket,
          PARLEY_FILES_S3_ENDPOINT: s3.url,
          PARLEY_FILES_S3_ACCESS_KEY_ID: 'FAKEACCESSKEY',
          PARLEY_FILES_S3_SECRET_ACCESS_KEY: 'fake-secret-key',
          PARLEY_FILES_S3_REGION: 'us-east-1',
        };
        const url2 = await newDatabase();
        const toBucket = await parleyAsync(['db', 'copy', '--to', url2, '--data-dir', from], bucketEnv);
        expect(toBucket.code).toBe(0);
        expect(toBucket.out).toContain(`warning: 3 of 3 stored file(s) the database names are not in the bucket ${s3.bucket}`);
        expect(toBucket.out).toContain('parley db check-files --upload');
        const env = { ...bucketEnv, PARLEY_DATABASE_URL: url2 };
        const sent = await parleyAsync(['db', 'check-files', '--upload', '--json', '--data-dir', from], env);
        expect(sent.err).toBe('');
        expect(JSON.parse(sent.out)).toMatchObject({ storage: 's3', blobs: 3, uploaded: 3, missing: 0 });
        for (const key of keys) expect(Buffer.from(s3.objects.get(`parley/${key}`)!).equals(readFileSync(blobPathIn(join(from, 'files'), key)))).toBe(true);
        expect(JSON.parse((await parleyAsync(['db', 'check-files', '--upload', '--json', '--data-dir', from], env)).out)).toMatchObject({ uploaded: 0, missing: 0 });
        // Without a bucket, --upload has nowhere to send to.
        const nowhere = parley(['db', 'check-files', '--upload', '--data-dir', from]);
        expect(nowhere.code).toBe(2);
        expect(nowhere.err).toContain('PARLEY_FILES_S3_BUCKET, which is not set');
      } finally {
        s3.stop();
      }
    } finally {
      await admin.close();
      await pg.stop();
    }
  });
});

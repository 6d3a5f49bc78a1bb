/**
 * Preloaded by `bun test` (bunfig.toml): every temporary directory the tests make goes under one
 * directory for the run, removed when the run ends. The suite makes a few hundred data
 * directories and binaries (580 MB a run, one backup test alone 150 MB); left in the system's
 * temporary directory they filled a developer's disk.
 */
import { afterAll } from 'bun:test';
import { useRunTempDir } from '../../scripts/lib/run-temp-dir';
import { stopTestDatabases } from './test-database';

// `bun test` does not always reach the exit hook: a global hook (registered by a preload, it runs
// once, after the last test file) removes the directory too, after stopping the PostgreSQL server
// a run on it started (PARLEY_TEST_STORE=pg), whose files may be in it.
const { remove } = useRunTempDir('parley-test-run');
afterAll(async () => {
  await stopTestDatabases();
  remove();
});

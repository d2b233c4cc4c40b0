import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAreaApp } from '../helpers/area-app.js';

const mode = (path: string) => statSync(path).mode & 0o777;

function assertPrivate(dataDir: string): void {
  assert.equal(mode(dataDir).toString(8), '700', 'the data directory');
  const expected = ['bulwark.db', 'bulwark.db-wal', 'bulwark.db-shm', 'jwt.key', 'secrets.key', 'recovery.key', 'daemon-api.key'];
  for (const name of expected) {
    const path = join(dataDir, name);
    assert.ok(existsSync(path), `${name} exists`);
    assert.equal(mode(path).toString(8), '600', name);
  }
  for (const name of readdirSync(dataDir).filter((n) => /\.db|\.key$/.test(n))) assert.equal(mode(join(dataDir, name)).toString(8), '600', name);
}

test('the data directory is 0700 and the database (WAL and SHM included) and key files 0600, on creation and at every start', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-files-'));
  try {
    chmodSync(dataDir, 0o755);
    const first = await startAreaApp({ dataDir }); // the administrator's registration: a write, so the WAL holds something
    assertPrivate(dataDir);
    await first.close();

    // what an earlier version (or a careless umask) left behind is tightened at the next start
    chmodSync(dataDir, 0o755);
    for (const name of ['bulwark.db', 'jwt.key']) chmodSync(join(dataDir, name), 0o644);
    const second = await startAreaApp({ dataDir });
    assertPrivate(dataDir);
    await second.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

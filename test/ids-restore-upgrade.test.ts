import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { json } from './helpers/app.js';
import { startAreaApp } from './helpers/area-app.js';

// A database from before the IDS kept its applied record (an upgrade): the engine that was on must come back at the
// first start, from what is stored, and that becomes the record; a fresh install (IDS disabled) starts nothing.
test('IDS without an applied record (a database from before records were kept): the stored, enabled IDS comes back at start and is recorded', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-ids-upgrade-'));
  try {
    const first = await startAreaApp({ dataDir });
    assert.equal((await first.request('PUT', '/api/v1/ids/config', { mode: 'ids', interfaces: ['eth1'] })).statusCode, 200);
    assert.equal((await first.request('POST', '/api/v1/ids/reload')).statusCode, 200);
    assert.equal(json(await first.request('GET', '/api/v1/ids/stats')).running, true);
    await first.close();

    const db = new Database(join(dataDir, 'bulwark.db'));
    assert.equal(db.prepare("DELETE FROM service_state WHERE name = 'ids.applied'").run().changes, 1, 'the record existed and is removed');
    db.close();

    const upgraded = await startAreaApp({ dataDir });
    try {
      // The start-up restore runs in the background once the API answers: poll it with a deadline.
      const deadline = Date.now() + 30_000;
      while (json(await upgraded.request('GET', '/api/v1/ids/stats')).running !== true && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(json(await upgraded.request('GET', '/api/v1/ids/stats')).running, true, 'the engine that was on is back without a reload');
      const check = new Database(join(dataDir, 'bulwark.db'), { readonly: true });
      const row = check.prepare("SELECT data FROM service_state WHERE name = 'ids.applied'").get() as { data: string } | undefined;
      check.close();
      assert.equal(JSON.parse(row?.data ?? '{}').recorded, true, 'what it started from is now the applied record');
    } finally {
      await upgraded.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/**
 * disk.nearly_full from its producer on a real file system: the data directory lives on a 16 MiB tmpfs this test
 * mounts (root); filled past 90 % it sends one signed webhook to a loopback receiver — one, however many checks
 * follow while it stays full; emptied below 85 % and filled again it is announced anew.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json } from './helpers/app.js';
import { startAreaApp } from './helpers/area-app.js';
import { areaOf } from './helpers/areas.js';
import { systemSkip } from './helpers/system-skip.js';
import type { createEventsArea } from '../src/areas/events/routes.js';
import { EVENT_TOPICS } from '../src/core/events.js';

const skip = systemSkip('a tmpfs holding the data directory', { root: true, programs: ['mount', 'umount'] });

/** Writes a file that brings the file system holding `dir` to `pct` percent used. */
function fillTo(dir: string, pct: number, file: string): void {
  const stats = statfsSync(dir);
  const used = stats.blocks - stats.bavail;
  const wanted = Math.ceil(stats.blocks * (pct / 100)) - used;
  writeFileSync(file, Buffer.alloc(Math.max(0, wanted) * stats.bsize));
}

test('a data directory filled past 90 % sends one disk_nearly_full webhook, not one per check; below 85 % it is armed again', { skip, timeout: 120_000 }, async () => {
  const mountPoint = mkdtempSync(join(tmpdir(), 'evr-disk-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0700', 'evr-disk', mountPoint], { encoding: 'utf8' });
  assert.equal(mounted.status, 0, mounted.stderr);
  const hooks: { event: string; body: string }[] = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      hooks.push({ event: String(request.headers['x-bulwark-event']), body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const dataDir = join(mountPoint, 'data');
  mkdirSync(dataDir);
  const app = await startAreaApp({ dataDir });
  try {
    const port = (receiver.address() as { port: number }).port;
    const hook = json(await app.request('POST', '/api/v1/notify/webhooks', { name: 'disk', url: `http://127.0.0.1:${port}/disk`, secret: 'disk-secret', allowed_addresses: ['127.0.0.1'] }));
    assert.equal((await app.request('PUT', '/api/v1/notify/events', [{ event: 'disk_nearly_full', email: false, webhooks: [hook.id] }])).statusCode, 200);
    const events = areaOf<ReturnType<typeof createEventsArea>>(app.app, 'events');
    let announced = 0;
    app.app.context.events.on(EVENT_TOPICS.diskNearlyFull, () => announced++);

    const before = await events.disk.check();
    assert.ok(before !== null && before < 85, `the fresh tmpfs is ${before} % used`);
    const filler = join(mountPoint, 'filler');
    fillTo(dataDir, 95, filler);
    for (let check = 0; check < 5; check++) assert.ok(((await events.disk.check()) ?? 0) >= 90);
    await events.notifier.settled();
    assert.equal(announced, 1, 'announced once for five checks while full');
    const delivered = hooks.filter((h) => h.event === 'disk_nearly_full');
    assert.equal(delivered.length, 1, JSON.stringify(hooks));
    const body = JSON.parse(delivered[0]!.body);
    assert.equal(body.payload.path, dataDir);
    assert.ok(body.payload.used_pct >= 90 && body.payload.threshold_pct === 90, delivered[0]!.body);

    // Emptied: nothing; filled again: announced anew.
    rmSync(filler);
    assert.ok(((await events.disk.check()) ?? 100) < 85);
    fillTo(dataDir, 95, filler);
    await events.disk.check();
    assert.equal(announced, 2, 'a new crossing after the file system was emptied is announced');
  } finally {
    await app.close();
    receiver.close();
    spawnSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  }
});

/**
 * GET /status while the start-up restores run (src/core/service-restore.ts): `ready` is false, and each enabled
 * service that is not back says what it waits for (its turn, its daemon's control channel); once every restore ran
 * and every enabled service runs, `ready` is true. A restore that fails keeps `ready` false and says why; a service
 * that is not enabled is never waited for.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAuthArea } from '../src/areas/auth/routes.js';
import { createStatusArea } from '../src/areas/status/routes.js';
import type { AppContext } from '../src/context.js';

import { json } from './helpers/app.js';
import { startAreaApp } from './helpers/area-app.js';

/** A service whose restore waits until the test lets it go. */
function gatedService(context: AppContext, name: string, outcome: 'ok' | 'fail') {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let running = false;
  context.restore.register({
    name, daemon: `${name}-daemon`,
    enabled: () => true,
    running: async () => running,
    appliedVersion: () => 7,
    restore: async () => {
      await gate;
      if (outcome === 'fail') throw new Error(`${name}-daemon refused its configuration`);
      running = true;
    },
  });
  return { release };
}

test('/status says what each service waits for while starting, and ready only when every enabled one is back', async () => {
  const gates: Record<string, { release: () => void }> = {};
  const t = await startAreaApp({
    areas: (context) => {
      gates.first = gatedService(context, 'first', 'ok');
      gates.second = gatedService(context, 'second', 'fail');
      context.restore.register({ name: 'off', daemon: 'off-daemon', enabled: () => false, running: async () => false, appliedVersion: () => null });
      return [createAuthArea(context), createStatusArea(context)];
    },
  });
  try {
    const headers = t.headers;
    const status = async () => json(await t.app.inject({ url: '/api/v1/status', headers }));

    const starting = await status();
    assert.equal(starting.ready, false);
    assert.deepEqual(starting.services, [
      { name: 'first', daemon: 'first-daemon', enabled: true, running: false, applied_version: 7, waiting_for: 'first-daemon to answer on its control channel', error: null },
      { name: 'second', daemon: 'second-daemon', enabled: true, running: false, applied_version: 7, waiting_for: 'its turn: the services before it are being restored', error: null },
      { name: 'off', daemon: 'off-daemon', enabled: false, running: false, applied_version: null, waiting_for: null, error: null },
    ]);

    gates.first.release();
    gates.second.release();
    await t.app.context.restore.done();
    const failed = await status();
    assert.equal(failed.ready, false, 'a service that could not be restored is not back');
    assert.equal(failed.services[0].running, true);
    assert.equal(failed.services[0].waiting_for, null);
    assert.equal(failed.services[1].error, 'second-daemon refused its configuration');
    assert.match(failed.services[1].waiting_for, /its restore failed/);
  } finally {
    await t.close();
  }
});

test('/status is ready at once when no service has anything to restore', async () => {
  const t = await startAreaApp({ areas: (context) => [createAuthArea(context), createStatusArea(context)] });
  try {
    const body = json(await t.app.inject({ url: '/api/v1/status', headers: t.headers }));
    assert.equal(body.ready, true);
    assert.deepEqual(body.services, []);
  } finally {
    await t.close();
  }
});

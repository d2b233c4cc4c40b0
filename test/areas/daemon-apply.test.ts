/**
 * Apply semantics shared by every supervised daemon, on a real (non-simulated) platform whose programs are
 * fake tools in a temporary directory: a missing daemon or checker answers 503 naming the Debian package and
 * installs nothing; a daemon that does not come up answers 409 with its reason, the previous configuration is
 * put back and the daemon runs with it again; status tells running, pid, version, configuration and result.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import { freePort } from '../helpers/free-port.js';
import { createSimulatedPlatform } from '../../src/platform/simulated/index.js';
import { createProcessDaemons } from '../../src/platform/process-daemons.js';
import { findProgram } from '../../src/platform/daemon-tools.js';
import type { Platform } from '../../src/platform/platform.js';
import { runtimeRoot } from '../../src/platform/daemon-runtime.js';

const FAKE_CHRONYD = `#!/bin/sh
# A stand-in for chronyd: -p accepts any file; it refuses to run a file with "maxpoll 17" as chronyd refuses a
# socket it cannot open, and otherwise serves a command "socket" until it is terminated.
case "$1" in -v) echo "chronyd (chrony) version 0.0-fake"; exit 0;; -p) exit 0;; esac
file=""; while [ $# -gt 0 ]; do [ "$1" = "-f" ] && file="$2"; shift; done
if grep -q "maxpoll 17" "$file"; then echo "Fatal error : Could not open NTP socket on 127.0.0.1:123" >&2; exit 1; fi
socket=$(sed -n 's/^bindcmdaddress //p' "$file")
trap 'rm -f "$socket"; exit 0' TERM
touch "$socket"
while :; do sleep 0.2; done
`;

const FAKE_CHRONYC = `#!/bin/sh
# A stand-in for chronyc: answers while the fake chronyd's socket exists.
socket=""; command=""; while [ $# -gt 0 ]; do [ "$1" = "-h" ] && socket="$2"; command="$1"; shift; done
[ -e "$socket" ] || { echo "506 Cannot talk to daemon" >&2; exit 1; }
case "$command" in
  tracking) echo "C0000285,192.0.2.123,3,1700000000.000000000,0.000002000,0.000001000,0.000003000,-1.000,0.001,0.010,0.001000000,0.000500000,64.0,Normal";;
  sources) echo "^,*,192.0.2.123,2,6,377,12,-0.000010000,-0.000012000,0.000100000";;
esac
`;

let bin: string;
/** Programs as the platform sees them: the fakes first, then the real ones, minus those a test removes. */
const hidden = new Set<string>();
const fakeOrReal = (program: string) => {
  if (hidden.has(program)) return null;
  const fake = join(bin, program);
  return existsSync(fake) ? fake : findProgram(program);
};

let t: AreaApp;

before(async () => {
  bin = mkdtempSync(join(tmpdir(), 'bulwark-fake-daemons-'));
  chmodSync(bin, 0o755);
  for (const [name, text] of [['chronyd', FAKE_CHRONYD], ['chronyc', FAKE_CHRONYC]]) {
    writeFileSync(join(bin, name), text, { mode: 0o755 });
  }
  const simulated = createSimulatedPlatform();
  const daemons = createProcessDaemons({ findProgram: fakeOrReal, dropPrivileges: false });
  const platform: Platform = {
    ...simulated,
    name: 'linux',
    simulated: false,
    daemons,
    close: async () => {
      await daemons.closeAll();
      await simulated.close();
    },
  };
  t = await startAreaApp({ platform });
});

after(async () => {
  await t.close();
  rmSync(runtimeRoot({ dataDir: t.dataDir }), { recursive: true, force: true });
  rmSync(bin, { recursive: true, force: true });
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

test('chrony: a daemon that does not come up answers 409 with its reason; the previous configuration runs again', async () => {
  for (const source of json(await t.request('GET', '/api/v1/time/sources'))) await t.request('DELETE', `/api/v1/time/sources/${source.id}`);
  const source = json(await t.request('POST', '/api/v1/time/sources', { address: '192.0.2.123', max_poll: 10 }));
  const port = await freePort();
  assert.equal((await t.request('PUT', '/api/v1/time/config', { enabled: true, clock_discipline: false, ntp_listen: `127.0.0.1:${port}` })).statusCode, 200);
  const applied = await t.request('POST', '/api/v1/time/apply');
  assert.equal(applied.statusCode, 200, applied.body);
  assert.equal(json(applied).running, true);
  const installed = join(runtimeRoot({ dataDir: t.dataDir }), 'chronyd', 'chrony.conf');
  const first = readFileSync(installed, 'utf8');
  const before = json(await t.request('GET', '/api/v1/time/status'));
  assert.equal(before.running, true);
  assert.equal(typeof before.pid, 'number');
  assert.equal(before.config_sha256, sha256(first));
  assert.equal(before.last_apply_result, 'ok');
  assert.equal(before.reference, '192.0.2.123', 'tracking read through chronyc');
  assert.equal(before.sources[0].state, 'selected');

  assert.equal((await t.request('PUT', `/api/v1/time/sources/${source.id}`, { max_poll: 17 })).statusCode, 200);
  const refused = await t.request('POST', '/api/v1/time/apply');
  assert.equal(refused.statusCode, 409, refused.body);
  assert.match(json(refused).error, /^chrony did not start with the new configuration: chronyd exited with status 1: Fatal error : Could not open NTP socket on 127\.0\.0\.1:123; the previous configuration was restored and chronyd runs with it again$/);
  assert.equal(readFileSync(installed, 'utf8'), first, 'the previous file is back in place');
  const after = json(await t.request('GET', '/api/v1/time/status'));
  assert.equal(after.running, true);
  assert.notEqual(after.pid, before.pid, 'restarted with the previous configuration');
  assert.equal(after.config_sha256, sha256(first));
  assert.match(after.last_apply_result, /^rolled back: chronyd exited with status 1/);

  // The coordinated apply reports the same failure and records no version.
  const reload = await t.request('POST', '/api/v1/reload');
  assert.equal(reload.statusCode, 409, reload.body);
  assert.match(json(reload).error, /time: chrony did not start with the new configuration/);
  assert.equal(json(await t.request('GET', '/api/v1/time/status')).running, true);

  // Fixed: the coordinated apply records a version, and the status names it.
  assert.equal((await t.request('PUT', `/api/v1/time/sources/${source.id}`, { max_poll: 11 })).statusCode, 200);
  const fixed = await t.request('POST', '/api/v1/reload');
  assert.equal(fixed.statusCode, 200, fixed.body);
  const versions = json(await t.request('GET', '/api/v1/config/history'));
  const status = json(await t.request('GET', '/api/v1/time/status'));
  assert.equal(status.config_version, versions[0].version);
  assert.equal(status.config_sha256, sha256(readFileSync(installed, 'utf8')));
  assert.match(readFileSync(installed, 'utf8'), /maxpoll 11/);
});

test('a missing checker or daemon answers 503 naming the Debian package, and installs nothing', async () => {
  hidden.add('unbound-checkconf');
  try {
    const port = await freePort();
    await t.request('PUT', '/api/v1/dns/resolver/config', { enabled: true, listen_interfaces: ['127.0.0.1'], port, forwarding_enabled: false, dnssec: false });
    const applied = await t.request('POST', '/api/v1/dns/resolver/apply');
    assert.equal(applied.statusCode, 503, applied.body);
    assert.equal(json(applied).error, 'Unbound cannot run here: unbound-checkconf is not installed on this system: install the Debian package unbound');
    assert.equal(existsSync(join(runtimeRoot({ dataDir: t.dataDir }), 'unbound', 'unbound.conf')), false, 'an unchecked file is never installed');
    const check = json(await t.request('GET', '/api/v1/config/check'));
    assert.equal(check.valid, false);
    assert.ok(check.errors.some((e: string) => /dns: the rendered Unbound configuration was not checked: unbound-checkconf is not installed/.test(e)), JSON.stringify(check.errors));
    const reload = await t.request('POST', '/api/v1/reload');
    assert.equal(reload.statusCode, 503, reload.body);
    assert.match(json(reload).error, /dns: Unbound cannot run here: unbound-checkconf is not installed/);
    assert.match(json(await t.request('GET', '/api/v1/dns/resolver/status')).last_switch_result, /not installed/);
  } finally {
    hidden.delete('unbound-checkconf');
    await t.request('PUT', '/api/v1/dns/resolver/config', { enabled: false });
  }

  hidden.add('kea-dhcp4');
  try {
    assert.equal((await t.request('PUT', '/api/v1/dhcp/v4/config', { enabled: true, interfaces: ['lo'] })).statusCode, 200);
    const applied = await t.request('POST', '/api/v1/dhcp/v4/apply');
    assert.equal(applied.statusCode, 503, applied.body);
    assert.match(json(applied).error, /kea-dhcp4 is not installed on this system: install the Debian package kea-dhcp4-server$/);
    assert.match(json(await t.request('GET', '/api/v1/dhcp/status')).last_apply_result, /^failed: kea-dhcp4 is not installed/);
  } finally {
    hidden.delete('kea-dhcp4');
    await t.request('PUT', '/api/v1/dhcp/v4/config', { enabled: false });
  }

  // The daemon is there but the control tool Bulwark reads it through is not: it is not started.
  hidden.add('chronyc');
  try {
    const applied = await t.request('POST', '/api/v1/time/restart');
    assert.equal(applied.statusCode, 503, applied.body);
    assert.match(json(applied).error, /chronyc is not installed on this system: install the Debian package chrony$/);
    assert.equal(json(await t.request('GET', '/api/v1/time/status')).running, false);
  } finally {
    hidden.delete('chronyc');
  }
  assert.equal(json(await t.request('POST', '/api/v1/time/start')).running, true, 'with chronyc back, chronyd starts');
});

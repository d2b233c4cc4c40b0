/**
 * Kea lease events (src/platform/kea-lease-events.ts): the run_script hook is rendered asynchronous with the
 * script Bulwark writes; a line of Kea's output is a lease event only with the script's token and checked fields,
 * so hostile host names and lines a DHCP client could get Kea to log never pass; the script keeps its token when
 * it is written again (a Kea adopted across a restart still reports).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderKea, type KeaInput } from '../src/render/kea/kea.js';
import { parseLeaseEvent, leaseEventToken, writeLeaseEventScript } from '../src/platform/kea-lease-events.js';
import type { DaemonRuntime } from '../src/platform/daemon-runtime.js';

const TOKEN = '0123456789abcdef0123456789abcdef';
const line = (rest: string) => `bulwark-lease ${TOKEN} ${rest}`;

test('a lease line with the token and plain fields is a lease event; anything else is not', () => {
  assert.deepEqual(parseLeaseEvent(line('leases4_committed 10.0.0.100 02:42:0A:EA:00:99 3600 laptop.home'), TOKEN), {
    event: 'leases4_committed', ip_address: '10.0.0.100', mac_address: '02:42:0a:ea:00:99', valid_lifetime: 3600, hostname: 'laptop.home',
  });
  assert.equal(parseLeaseEvent(line('lease4_release 10.0.0.100 02:42:0a:ea:00:99 0 -'), TOKEN)?.hostname, null);
  const hostile = [
    `bulwark-lease ${'f'.repeat(32)} leases4_committed 10.0.0.100 02:42:0a:ea:00:99 3600 -`, // another token
    line('leases4_committed 10.0.0.100 02:42:0a:ea:00:99 3600 a b'), // a space smuggled into a field
    line('lease4_evil 10.0.0.100 02:42:0a:ea:00:99 3600 -'),
    line('leases4_committed 10.0.0.300 02:42:0a:ea:00:99 3600 -'),
    line('leases4_committed ::1 02:42:0a:ea:00:99 3600 -'),
    line('leases4_committed 10.0.0.100 hwtype=1 3600 -'),
    line('leases4_committed 10.0.0.100 02:42:0a:ea:00:99 -5 -'),
    line('leases4_committed 10.0.0.100 02:42:0a:ea:00:99 3600 $(reboot)'),
    line('leases4_committed 10.0.0.100 02:42:0a:ea:00:99 3600 "x"'),
    line('leases4_committed 10.0.0.100 02:42:0a:ea:00:99 3600 x;y'),
    `2026-11-28 INFO DHCP4_LEASE_ALLOC ${line('leases4_committed 10.0.0.100 02:42:0a:ea:00:99 3600 -')}`,
  ];
  for (const text of hostile) assert.equal(parseLeaseEvent(text, TOKEN), null, text);
  assert.equal(parseLeaseEvent(line('leases4_committed 10.0.0.100 02:42:0a:ea:00:99 3600 -'), ''), null, 'no token, no event');
});

test('the run_script hook is rendered asynchronous with its script; a script path that is not plain is refused', () => {
  const base: KeaInput = {
    global: { interfaces: ['eth1'], authoritative: true, default_lease_time: 3600, max_lease_time: 7200, dns_servers: [], domain_name: '', domain_search: [], ntp_servers: [], wins_servers: [], log_level: 'info' },
    subnets: [], reservations: [], ddns: { enabled: false, forward_zone: '', ttl: 300 },
    paths: { leaseFile: '/run/bulwark/kea/leases.csv', controlSocket: '/run/bulwark/kea/ctrl.sock' },
  };
  const library = '/usr/lib/x86_64-linux-gnu/kea/hooks/libdhcp_run_script.so';
  const rendered = JSON.parse(renderKea({ ...base, hooks: { leaseEvents: { library, script: '/run/bulwark/kea-dhcp4/lease-event.sh' } } }));
  assert.deepEqual(rendered.Dhcp4['hooks-libraries'], [{ library, parameters: { name: '/run/bulwark/kea-dhcp4/lease-event.sh', sync: false } }]);
  for (const script of ['/run/x "y".sh', 'relative.sh', '/run/x.sh\n', '/run/x.py']) {
    assert.throws(() => renderKea({ ...base, hooks: { leaseEvents: { library, script } } }), /hooks\.leaseEvents\.script/, script);
  }
});

test('the script is executable by Kea\'s group, names its token, and keeps it when written again', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-lease-script-'));
  try {
    const runtime = { dir, stateDir: join(dir, 'state'), account: null } as unknown as DaemonRuntime;
    const first = writeLeaseEventScript(runtime);
    assert.match(first.token, /^[0-9a-f]{32}$/);
    assert.equal(statSync(first.path).mode & 0o777, 0o750);
    assert.equal(leaseEventToken(runtime), first.token);
    assert.equal(writeLeaseEventScript(runtime).token, first.token);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

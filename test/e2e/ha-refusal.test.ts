/**
 * A high-availability write the daemons refuse is not kept (issue 39, the 409 rule): one Bulwark (`--platform
 * linux`) in its own namespace runs a VRRP instance; a state-sync setting conntrackd cannot run (its sync
 * interface has no address) answers 409 with the reason, GET shows the previous setting, and the keepalived that
 * held the virtual address before still holds it (same process).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { NetnsLab, inNamespace } from '../helpers/netns-lab.js';

const skip = systemSkip('the HA refusal namespace lab', { root: true, programs: ['ip', 'keepalived', 'conntrackd'] });
const VIP = '10.49.1.1';

let lab: NetnsLab;
let fw = '';
const ifs = { lan: '', sync: '' };

async function until<T>(what: string, probe: () => T | undefined | false, deadlineMs = 30_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const holdsVip = () => inNamespace(fw, 'ip', ['-4', '-o', 'addr', 'show', 'dev', ifs.lan]).includes(` ${VIP}/`);
const keepalivedPid = () => readFileSync(join(lab.runtimeRoot, 'keepalived', 'keepalived.pid'), 'utf8').trim();

before(async () => {
  if (skip) return;
  lab = new NetnsLab('hrr');
  fw = lab.namespace('fw');
  const peer = lab.namespace('pe');
  const t = lab.tag.slice(-6);
  Object.assign(ifs, { lan: `rl${t}`, sync: `rs${t}` });
  lab.link({ ns: fw, name: ifs.lan, address: '10.49.1.2/24' }, { ns: peer, name: `rp${t}`, address: '10.49.1.3/24' });
  // The sync link's local end has no address: conntrackd has nothing to bind to.
  lab.link({ ns: fw, name: ifs.sync }, { ns: peer, name: `rq${t}` });
  lab.startBulwark(fw, await freePort());
});

after(async () => {
  if (lab) await lab.cleanup();
});

test('a state-sync write conntrackd cannot run answers 409, is not kept, and the running VRRP instance stays', { skip, timeout: 240_000 }, async () => {
  lab.call('POST', '/api/v1/cluster/carp', { vhid: 49, virtual_ip: VIP, prefix: 24, interface: ifs.lan, password: 'ref49pw' });
  lab.call('PUT', '/api/v1/cluster/role', { role: 'primary' });
  await until('keepalived to take the virtual address', holdsVip, 60_000);
  const pid = keepalivedPid();

  const [refused] = lab.api(['PUT', '/api/v1/cluster/pfsync', { sync_interface: ifs.sync, sync_peer: '10.49.3.2', enabled: true }]);
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.match(refused.body.error, new RegExp(`${ifs.sync} has no IPv4 address`));
  assert.equal(lab.call('GET', '/api/v1/cluster/pfsync'), null, 'the refused setting is not stored');
  const status = lab.call('GET', '/api/v1/cluster/status');
  assert.equal(status.running, true, JSON.stringify(status));
  assert.equal(status.vrrp_state, 'master', JSON.stringify(status));
  assert.ok(holdsVip(), 'the virtual address is still held');
  assert.equal(keepalivedPid(), pid, 'the same keepalived runs');

  // A later write applies the stored (previous) state, not the refused one.
  const [again] = lab.api(['PUT', '/api/v1/cluster/role', { role: 'primary' }]);
  assert.equal(again.status, 200, JSON.stringify(again.body));
});

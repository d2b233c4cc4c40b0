/**
 * Property test for high availability's renderers (src/render/keepalived/keepalived.ts and conntrackd.ts, every value
 * through the one keepalived word function of keepalived-syntax.ts). Hostile strings are written through the HTTP
 * API into /cluster/carp and /cluster/pfsync: each write answers 400 naming the field, or the keepalived.conf the
 * platform would run has exactly the intended shape (every line one of the template's, no value a directive, a
 * block, a comment, a macro or an include). The renderers, fed hostile values directly (a stored value that
 * predates validation), refuse rather than emit one. The VRRP password is never returned.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from '../helpers/admin-api.js';
import { createSimulatedPlatform } from '../../src/platform/simulated/index.js';
import type { HaEngine, HaSpec, VrrpAddress } from '../../src/platform/ha.js';
import { renderKeepalivedConf } from '../../src/render/keepalived/keepalived.js';
import { renderConntrackdConf } from '../../src/render/conntrackd/conntrackd.js';
import { isRenderRefusal } from '../../src/render/refusal.js';

const platform = createSimulatedPlatform();
let applied: HaSpec | null = null;
const ha: HaEngine = { ...platform.ha, apply: async (spec) => ((applied = spec), platform.ha.apply(spec)) };
const api = adminApi({ platform: { ...platform, ha } });

const PIECES = ['{', '}', '!', '#', '"', "'", '$', '@', '~', ' ', '\t', '\n', '\r', 'include', '/etc/passwd', '..', '-', '=', ':', '.', '10.0.0.1',
  '::1', 'eth0', 'a', '0', 'virtual_ipaddress', 'notify', 'script', '$(id)', '`id`', ';', '|', '\u0000', 'é', '\\', '/', '%', '+'];
function hostile(seed: number): string {
  let state = (seed * 2654435761) >>> 0;
  const next = () => (state = (state * 1103515245 + 12345) >>> 0);
  return Array.from({ length: 1 + (next() % 6) }, () => PIECES[next() % PIECES.length]).join('');
}
const HOSTILE = [
  'eth0 }\nvrrp_script x { script "/bin/sh" }', 'pw}', 'pw"x', '$MACRO', '@host eth0', '~SEQ(a,1,2)', 'include /etc/passwd', 'eth0#x', 'a b', '',
  '10.0.0.1/24 dev eth0\n}', '10.0.0.1 dev lo', '-x', 'x'.repeat(40), '12345678', 'p!ss', ...Array.from({ length: 300 }, (_, i) => hostile(i + 1)),
];

/** The template's lines; a value may only fill a slot shaped like a keepalived word. */
const W = '[A-Za-z0-9._:/%+=-]+';
const LINES = [
  '# Rendered by Bulwark from /cluster/carp; edits are overwritten\\.', 'global_defs \\{', '  router_id bulwark', '  enable_script_security', '  script_user root',
  '  vrrp_garp_master_delay 1', '  vrrp_garp_master_refresh 60', '\\}', 'vrrp_track_file bulwark_(demotion|health) \\{', `  file "/${W}"`, '  weight -(1|60)',
  '  init_file 0', 'vrrp_sync_group bulwark \\{', '  group \\{', '    bulwark_vhid_\\d{1,3}', '  \\}', '  sync_group_tracking_weight', '  track_file \\{',
  '    bulwark_demotion', '    bulwark_health', `  notify "/${W}"`, 'vrrp_instance bulwark_vhid_\\d{1,3} \\{', '  state BACKUP', `  interface ${W}`,
  '  virtual_router_id \\d{1,3}', '  priority (150|100)', '  advert_int 1', '  authentication \\{', '    auth_type PASS', '    auth_pass [A-Za-z0-9._+=-]{1,8}',
  '  virtual_ipaddress \\{', `    [0-9a-fA-F.:]+/\\d{1,3} dev ${W}`,
].map((line) => new RegExp(`^${line}$`));
const FILES = { demotionFile: '/run/b/demotion', healthFile: '/run/b/health', notifyScript: '/run/b/notify.sh' };

function assertShape(spec: HaSpec): void {
  const text = renderKeepalivedConf({ role: spec.role, addresses: spec.addresses, routerId: 'bulwark' }, FILES);
  const lines = text.trimEnd().split('\n');
  for (const line of lines) assert.ok(LINES.some((pattern) => pattern.test(line)), `line ${JSON.stringify(line)}`);
  assert.equal(lines.length, 27 + spec.addresses.length * 16, 'exactly the template\'s lines');
  assert.equal(lines.filter((line) => line.endsWith('{')).length, lines.filter((line) => line.trim() === '}').length, 'blocks balanced');
}

test('hostile values written through the API: 400 naming the field, or a keepalived.conf of exactly the intended shape', async () => {
  assert.equal((await api.call('PUT', '/api/v1/cluster/role', { role: 'primary' })).status, 200);
  const base = { vhid: 1, virtual_ip: '10.9.0.1', prefix: 24, interface: 'eth0', password: 'secret' };
  let accepted = 0;
  for (const [index, value] of HOSTILE.entries()) {
    for (const field of ['interface', 'virtual_ip', 'password'] as const) {
      applied = null;
      const answer = await api.call('POST', '/api/v1/cluster/carp', { ...base, vhid: 1 + (index % 250), virtual_ip: `10.9.${index % 250}.${field.length}`, [field]: value });
      if (answer.status === 400) {
        assert.match(answer.body.error, new RegExp(`body\\.${field}|body/${field}|${field}`), `${field} ${JSON.stringify(value)}: ${answer.body.error}`);
        continue;
      }
      assert.equal(answer.status, 201, `${field} ${JSON.stringify(value)}: ${JSON.stringify(answer.body)}`);
      accepted++;
      assert.ok(!('password' in answer.body), 'the password is never returned');
      assert.ok(applied, 'the platform received the addresses');
      assertShape(applied as HaSpec);
      assert.equal((await api.call('DELETE', `/api/v1/cluster/carp/${answer.body.id}`)).status, 204);
    }
    for (const field of ['sync_interface', 'sync_peer'] as const) {
      const answer = await api.call('PUT', '/api/v1/cluster/pfsync', { sync_interface: 'eth1', sync_peer: '10.8.0.2', enabled: true, [field]: value });
      if (answer.status === 400) {
        assert.match(answer.body.error, new RegExp(field), `${field} ${JSON.stringify(value)}: ${answer.body.error}`);
        continue;
      }
      assert.equal(answer.status, 200, `${field} ${JSON.stringify(value)}: ${JSON.stringify(answer.body)}`);
      assert.match(String(answer.body[field]), /^[A-Za-z0-9_.:-]+$/);
    }
  }
  assert.ok(accepted >= 3, 'benign values among them were accepted and rendered');
  const listed = await api.call('GET', '/api/v1/cluster/carp');
  assert.ok((listed.body as object[]).every((entry) => !('password' in entry)));
});

test('the renderers refuse a hostile value they are handed directly (a stored value that predates validation)', () => {
  const address: VrrpAddress = { vhid: 1, virtualIp: '10.9.0.1', prefix: 24, interface: 'eth0', password: 'secret' };
  const refuses = (render: () => unknown) => {
    try {
      render();
      return false;
    } catch (error) {
      return isRenderRefusal(error);
    }
  };
  const carp = (change: Partial<VrrpAddress>) => () => renderKeepalivedConf({ role: 'primary', routerId: 'bulwark', addresses: [{ ...address, ...change }] }, FILES);
  const sync = (change: Record<string, string>) => () => renderConntrackdConf({ syncInterface: 'eth1', localAddress: '10.8.0.1', peerAddress: '10.8.0.2', ignoreAddresses: [], ...change }, { lockFile: '/run/b/l', socket: '/run/b/s', logFile: '/run/b/log' });
  for (const value of HOSTILE) {
    const word = /^[A-Za-z0-9._:/%+=-]+$/.test(value) && value.length <= 255 && !value.startsWith('-');
    if (!word) {
      assert.ok(refuses(carp({ interface: value })), `interface ${JSON.stringify(value)}`);
      assert.ok(refuses(carp({ password: value })), `password ${JSON.stringify(value)}`);
      assert.ok(refuses(sync({ syncInterface: value })), `sync interface ${JSON.stringify(value)}`);
    }
    if (!/^[0-9a-fA-F.:]+$/.test(value) || !(value.includes('.') || value.includes(':')) || value === ':' || value.startsWith('-')) {
      assert.ok(refuses(carp({ virtualIp: value })) || /^[0-9.]+$/.test(value), `virtual ip ${JSON.stringify(value)}`);
      assert.ok(refuses(sync({ peerAddress: value })) || /^[0-9.]+$/.test(value), `peer ${JSON.stringify(value)}`);
    }
  }
  for (const vhid of [0, 256, -1, 1.5]) assert.ok(refuses(carp({ vhid })), `vhid ${vhid}`);
  for (const prefix of [-1, 33, 1.5]) assert.ok(refuses(carp({ prefix })), `prefix ${prefix}`);
  assert.ok(refuses(() => renderKeepalivedConf({ role: 'primary', routerId: 'bulwark', addresses: [address] }, { ...FILES, notifyScript: '/run/../etc/x' })), 'a path that climbs');
  assert.equal(refuses(carp({})), false, 'the benign address renders');
});

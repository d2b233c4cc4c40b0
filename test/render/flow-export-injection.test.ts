/**
 * Property test for flow export's renderer (src/platform/softflowd-arguments.ts, the one function that turns
 * /settings/flow-export into softflowd's argument vector). Every string field is written with hostile values
 * through the HTTP API: each write answers 400 naming the field, or the vector the platform would run has
 * exactly the intended shape (every value one argument in its place, no value an option). The renderer itself,
 * fed hostile values directly (a stored value that predates validation), refuses rather than emit one.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { adminApi } from '../helpers/admin-api.js';
import { createSimulatedPlatform } from '../../src/platform/simulated/index.js';
import type { FlowExporter, FlowExportSpec } from '../../src/platform/flow-export.js';
import { softflowdArguments, CAPTURE_BUFFER_BYTES } from '../../src/platform/softflowd-arguments.js';
import { isRenderRefusal } from '../../src/render/refusal.js';
import { forbidOutsideNetwork } from '../helpers/no-network.js';

// Hostile collectors include names: their lookups are answered here, never sent to a resolver.
const network = forbidOutsideNetwork();
after(() => network.restore());

const platform = createSimulatedPlatform();
let applied: FlowExportSpec | null = null;
const flowExport: FlowExporter = { ...platform.flowExport, apply: async (spec) => ((applied = spec), platform.flowExport.apply(spec)) };
const api = adminApi({ platform: { ...platform, flowExport } });
const PATH = '/api/v1/settings/flow-export';

const PIECES = ['-', '--', '-n', '-i', ' ', '\t', '\n', ',', ':', '[', ']', '::1', '127.0.0.1', '11.22.33.44', '$(id)', '`id`', ';', '|', '&', '"', "'",
  '\\', '/', '..', 'eth0', 'a', '0', '65536', '9999', '\u0000', 'é', '=', '#', '*', '%n'];

function hostile(seed: number): string {
  let state = (seed * 2654435761) >>> 0;
  const next = () => (state = (state * 1103515245 + 12345) >>> 0);
  return Array.from({ length: 1 + (next() % 6) }, () => PIECES[next() % PIECES.length]).join('');
}
const HOSTILE = [
  '-i', '--help', '-n 1.2.3.4:9', 'eth0 -n 11.22.33.44:9', 'eth0\n-n', '11.22.33.44:9,11.22.33.45:9', '11.22.33.44:9 -v 5', '../../etc/passwd',
  'eth0;id', '$(id)', '[11.22.33.44]:9', '[::ffff:1.2.3.4]:9', '11.22.33.44:-9', '11.22.33.44:0x10', 'x'.repeat(40), '', ' ', 'netflow9 ', 'ipfix\n',
  ...Array.from({ length: 300 }, (_, i) => hostile(i + 1)),
];

/** The vector for one interface, with the layout the renderer promises: flags in their places, each value a single argument. */
function assertShape(spec: FlowExportSpec, name: string): void {
  const argv = softflowdArguments(spec, { name, ifindex: 7 }, { pidFile: '/run/x/if7.pid', controlSocket: '/run/x/if7.ctl' });
  const flags = ['-d', '-N', '-B', '-i', '-n', '-v', '-A', '-6', ...Array(8).fill('-t'), ...(spec.sampling > 1 ? ['-s'] : []), '-p', '-c'];
  const takesValue = new Set(['-B', '-i', '-n', '-v', '-A', '-t', '-s', '-p', '-c']);
  let at = 0;
  for (const flag of flags) {
    assert.equal(argv[at++], flag, argv.join(' '));
    if (!takesValue.has(flag)) continue;
    const value = argv[at++];
    assert.ok(value !== undefined && !value.startsWith('-') && !/\s/.test(value), `${flag} ${JSON.stringify(value)}`);
    if (flag === '-B') assert.equal(value, String(CAPTURE_BUFFER_BYTES));
    if (flag === '-i') assert.equal(value, `7:${name}`);
    if (flag === '-n') assert.match(value, /^((\d{1,3}\.){3}\d{1,3}|\[[0-9a-f:.]+\]):\d{1,5}(,((\d{1,3}\.){3}\d{1,3}|\[[0-9a-f:.]+\]):\d{1,5})*$/);
    if (flag === '-v') assert.ok(value === '9' || value === '10');
    if (flag === '-t') assert.match(value, /^[a-z.]+=\d+$/);
  }
  assert.equal(at, argv.length, 'nothing after the control socket');
}

test('hostile values written through the API: 400 naming the field, or an argument vector of exactly the intended shape', async () => {
  assert.equal((await api.call('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['127.0.0.1/32', '::1/128', '10.0.0.0/8'] })).status, 200);
  const base = { enabled: true, collectors: ['11.22.33.44:2055'], interfaces: ['eth0'] };
  let accepted = 0;
  for (const value of HOSTILE) {
    for (const [field, body] of [
      ['collectors', { ...base, collectors: [value] }],
      ['interfaces', { ...base, interfaces: [value] }],
      ['protocol', { ...base, protocol: value }],
    ] as const) {
      applied = null;
      const answer = await api.call('PUT', PATH, body);
      if (answer.status === 400) {
        assert.match(answer.body.error, new RegExp(`body\\.${field}`), `${field} ${JSON.stringify(value)}: ${answer.body.error}`);
        continue;
      }
      // A name that resolves to nothing, or to a refused address, is a 409 at apply.
      if (answer.status === 409 && field === 'collectors') continue;
      assert.equal(answer.status, 200, `${field} ${JSON.stringify(value)}: ${JSON.stringify(answer.body)}`);
      accepted++;
      assert.ok(applied, 'the platform received the export');
      const spec = applied as FlowExportSpec;
      for (const name of spec.interfaces) assertShape(spec, name);
    }
  }
  assert.ok(accepted >= 3, 'benign values among them were accepted and rendered');
});

test('the renderer refuses a hostile value it is handed directly (a stored value that predates validation)', () => {
  const spec: FlowExportSpec = { protocol: 'ipfix', collectors: [{ address: '11.22.33.44', port: 2055 }], activeTimeoutSecs: 60, inactiveTimeoutSecs: 15, sampling: 1, interfaces: ['eth0'], runtime: { dataDir: '/var/lib/bulwark' } };
  const files = { pidFile: '/run/x/if7.pid', controlSocket: '/run/x/if7.ctl' };
  const refuses = (change: Partial<FlowExportSpec>, name = 'eth0', ifindex = 7, paths = files) => {
    try {
      assertShape({ ...spec, ...change }, name);
      softflowdArguments({ ...spec, ...change }, { name, ifindex }, paths);
      return false;
    } catch (error) {
      return isRenderRefusal(error);
    }
  };
  for (const value of HOSTILE) {
    if (/^[A-Za-z0-9_.:][A-Za-z0-9_.:-]{0,31}$/.test(value)) continue; // an interface name by the grammar: rendered, shape checked below
    assert.ok(refuses({}, value), `interface ${JSON.stringify(value)}`);
  }
  for (const value of HOSTILE) {
    if (/^[0-9a-fA-F.:]+$/.test(value) && /^(\d{1,3}\.){3}\d{1,3}$|:/.test(value) && !value.startsWith('-')) continue;
    assert.ok(refuses({ collectors: [{ address: value, port: 2055 }] }), `collector address ${JSON.stringify(value)}`);
  }
  for (const port of [0, -1, 65536, 1.5, Number.NaN]) assert.ok(refuses({ collectors: [{ address: '11.22.33.44', port }] }), `port ${port}`);
  for (const protocol of ['sflow', '', 'ipfix -v 5']) assert.ok(refuses({ protocol: protocol as 'ipfix' }), protocol);
  for (const n of [0, -5, 1.5, 1e9]) {
    assert.ok(refuses({ sampling: n }), `sampling ${n}`);
    assert.ok(refuses({ activeTimeoutSecs: n }), `active ${n}`);
    assert.ok(refuses({ inactiveTimeoutSecs: n }), `inactive ${n}`);
  }
  assert.ok(refuses({}, 'eth0', 0), 'an interface without an index');
  assert.ok(refuses({}, 'eth0', 7, { pidFile: '/run/x/../../etc/passwd', controlSocket: '/run/x/c' }), 'a pid file path that climbs');
  assert.ok(refuses({}, 'eth0', 7, { pidFile: 'relative.pid', controlSocket: '/run/x/c' }), 'a relative pid file path');
  assert.ok(refuses({ collectors: [] }), 'no collector');
  // The benign spec renders, and its shape holds.
  assert.equal(refuses({}), false);
});

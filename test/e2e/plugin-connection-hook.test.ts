/**
 * The `connection_new` hook of plugins, fed from the kernel's state table (docs/plugins.md): Bulwark (`--platform
 * linux`) runs in a firewall namespace between a client and a server namespace, with a test plugin subscribed to
 * `connection_new`. The client opens a TCP connection to the server through the firewall — conntrack reports it NEW,
 * `conntrack -E` (followed by Bulwark) reads it, the hub announces `connection.new`, the plugin receives it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { systemSkip } from '../helpers/system-skip.js';
import { freePort } from '../helpers/free-port.js';
import { inNamespace, NetnsLab, ROOT } from '../helpers/netns-lab.js';

const skipReason = () => systemSkip('the plugin connection hook namespace lab', { root: true, programs: ['conntrack', 'nft', 'ip', 'setpriv'], users: ['nobody'] });

const CLIENT = '10.238.1.2';
const SERVER = '10.238.2.2';
const PORT = 8431;

test('a plugin subscribed to connection_new receives the TCP connection a client opens through the firewall', { skip: skipReason(), timeout: 240_000 }, async () => {
  const lab = new NetnsLab('pc');
  try {
    const fw = lab.namespace('fw');
    const client = lab.namespace('cl');
    const server = lab.namespace('sv');
    lab.link({ ns: client, name: `pca${lab.tag}`.slice(0, 15), address: `${CLIENT}/24` }, { ns: fw, name: `pcb${lab.tag}`.slice(0, 15), address: '10.238.1.1/24' });
    lab.link({ ns: server, name: `pcc${lab.tag}`.slice(0, 15), address: `${SERVER}/24` }, { ns: fw, name: `pcd${lab.tag}`.slice(0, 15), address: '10.238.2.1/24' });
    inNamespace(client, 'ip', ['route', 'add', 'default', 'via', '10.238.1.1']);
    inNamespace(server, 'ip', ['route', 'add', 'default', 'via', '10.238.2.1']);
    inNamespace(fw, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
    lab.spawnIn(server, process.execPath, ['-e', `require('net').createServer((s) => s.end('hi\\n')).listen(${PORT}, '${SERVER}')`]);
    cpSync(join(ROOT, 'test/fixtures/plugins/conn-probe'), join(lab.dataDir, 'plugins', 'conn-probe'), { recursive: true });
    lab.startBulwark(fw, await freePort());

    lab.call('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: PORT, label: 'conn-probe' });
    lab.call('POST', '/api/v1/reload');
    lab.call('POST', '/api/v1/plugins/toggle', { name: 'conn-probe' }, 200);
    const output = (): string[] => (lab.call('GET', '/api/v1/plugins/conn-probe/logs?lines=500').entries as string[]);
    const waitFor = async (what: string, pattern: RegExp, action?: () => void): Promise<string> => {
      const deadline = Date.now() + 90_000;
      for (;;) {
        action?.();
        const found = output().find((line) => pattern.test(line));
        if (found) return found;
        if (Date.now() > deadline) assert.fail(`the plugin never logged ${what}; its log:\n${output().join('\n')}\n${lab.log}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };
    await waitFor('its hello', /output: hello hooks=connection_new/);

    // Each attempt is a new connection (a new source port): the first one after the reader follows is announced.
    const connect = () => {
      const answer = inNamespace(client, process.execPath, ['-e', `const s = require('net').connect(${PORT}, '${SERVER}'); s.on('data', (d) => { process.stdout.write(d); s.end(); }); s.on('error', (e) => { console.error(e.message); process.exit(1); })`], { timeoutMs: 20_000 });
      assert.equal(answer, 'hi\n');
    };
    const line = await waitFor('the new connection', new RegExp(`output: event connection_new connection\\.new .*"dst_addr":"${SERVER.replaceAll('.', '\\.')}"`), connect);
    const connection = JSON.parse(line.slice(line.indexOf('{')));
    assert.deepEqual(
      { protocol: connection.protocol, src_addr: connection.src_addr, dst_addr: connection.dst_addr, dst_port: connection.dst_port },
      { protocol: 'tcp', src_addr: CLIENT, dst_addr: SERVER, dst_port: PORT },
    );
    assert.ok(connection.src_port > 0 && Number.isInteger(connection.id), line);
  } finally {
    await lab.cleanup();
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NftSession } from '../src/platform/linux/nft-session.js';
import { NftablesPacketFilter } from '../src/platform/linux/packet-filter.js';
import { systemSkip } from './helpers/system-skip.js';

const hasBinding = spawnSync('/usr/bin/python3', ['-c', 'import nftables'], { stdio: 'ignore' }).status === 0;
const skip = systemSkip('the libnftables session test (a network namespace)', { root: true, also: [['python3-nftables', hasBinding]] });

test('without python3-nftables the session declines and the driver loads through the CLI', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-nft-session-'));
  try {
    // -S: no site directories, so the nftables module cannot be imported (as on a system without the package).
    const session = new NftSession(['/usr/bin/python3', '-S']);
    assert.equal(await session.run('add table inet t'), undefined);
    assert.equal(await new NftSession(['/nonexistent/python3']).run('add table inet t'), undefined, 'nor when there is no interpreter');
    writeFileSync(join(dir, 'nft'), `#!/bin/sh\ncat > ${join(dir, 'loaded')}\n`);
    chmodSync(join(dir, 'nft'), 0o755);
    const driver = new NftablesPacketFilter(async () => { throw new Error('unused'); }, join(dir, 'nft'), 'conntrack', 'ip', session);
    assert.deepEqual(await driver.apply({ dialect: 'nftables', text: 'add table inet bulwark\n' }), { ok: true });
    assert.equal(spawnSync('cat', [join(dir, 'loaded')], { encoding: 'utf8' }).stdout, 'add table inet bulwark\n', 'the CLI got the script');
    assert.equal(session.answered, 0);
    await driver.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('in a namespace: the session loads scripts in one transaction, a refusal changes nothing and names its line', { skip }, async () => {
  const namespace = `nftsess${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-nft-session-'));
  spawnSync('ip', ['netns', 'add', namespace]);
  const nft = (...args: string[]) => spawnSync('ip', ['netns', 'exec', namespace, 'nft', ...args], { encoding: 'utf8' });
  writeFileSync(join(dir, 'nft'), `#!/bin/sh\nexec ip netns exec ${namespace} nft "$@"\n`);
  chmodSync(join(dir, 'nft'), 0o755);
  const session = new NftSession(['ip', 'netns', 'exec', namespace, '/usr/bin/python3']);
  const driver = new NftablesPacketFilter(async () => { throw new Error('unused'); }, join(dir, 'nft'), 'conntrack', 'ip', session);
  try {
    const table = 'table inet bulwark {\n\tchain c {\n\t\ttcp dport 22 accept\n\t}\n}\n';
    assert.deepEqual(await driver.apply({ dialect: 'nftables', text: table }), { ok: true });
    assert.match(nft('list', 'table', 'inet', 'bulwark').stdout, /tcp dport 22 accept/);
    assert.equal(session.answered, 1, 'the load went through the session');

    // The second line is refused by the kernel (no such chain): the first, in the same transaction, is not kept.
    const refused = await driver.apply({ dialect: 'nftables', text: 'add rule inet bulwark c tcp dport 23 accept\nadd rule inet bulwark nochain accept\n' });
    assert.equal(refused.ok, false);
    assert.match(!refused.ok ? refused.message : '', /^nft refused line 2 \(add\)/, 'the CLI run again names the line');
    assert.doesNotMatch(nft('list', 'table', 'inet', 'bulwark').stdout, /dport 23/, 'nothing of the refused script was kept');

    const direct = await session.run('add rule inet bulwark nochain accept');
    assert.equal(direct?.code, 1);
    assert.match(direct?.stderr ?? '', /No such file or directory/);
    assert.equal((await session.run('add rule inet bulwark c tcp dport 24 accept'))?.code, 0, 'the session goes on after a refusal');
    assert.match(nft('list', 'table', 'inet', 'bulwark').stdout, /dport 24/);
  } finally {
    await driver.close();
    spawnSync('ip', ['netns', 'delete', namespace]);
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * The download cap on the two paths that had none worth the name (issue 31 item 6): IDS ruleset downloads
 * (Content-Length only) and url_table alias sources (nothing). Both take only https URLs to addresses the outbound
 * guard accepts, so the server runs inside a namespace this test creates, on an ordinary address bound to that
 * namespace's loopback (nothing leaves the namespace), with a certificate Bulwark trusts through
 * NODE_EXTRA_CA_CERTS. The "big" files are streamed chunked, without Content-Length, past the 64 MiB cap.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NetnsLab, ROOT, inNamespace, run } from '../helpers/netns-lab.js';
import { freePort } from '../helpers/free-port.js';
import { findProgram } from '../../src/platform/daemon-tools.js';
import { REQUIRE_SYSTEM_TESTS } from '../helpers/shared.js';

/** Not special to the outbound guard; exists only on the loopback of the test's own namespace. */
const ADDRESS = '11.22.33.44';
const PORT = 8443;
const TOTAL = 96 * 1024 * 1024;

function skipReason(): string | false {
  const missing = process.getuid?.() !== 0 ? ['root'] : ['ip', 'nft', 'openssl'].filter((program) => !findProgram(program));
  if (missing.length === 0) return false;
  if (REQUIRE_SYSTEM_TESTS) throw new Error(`REQUIRE_SYSTEM_TESTS=1 but this test needs ${missing.join(', ')}`);
  return `needs ${missing.join(', ')}`;
}

interface Served {
  path: string;
  finished: boolean;
  sent: number;
}

test('IDS rulesets and url_table sources: an answer streamed past 64 MiB without Content-Length is refused, stopped, and nothing of it kept', { skip: skipReason(), timeout: 300_000 }, async () => {
  const lab = new NetnsLab('dcap');
  const files = mkdtempSync(join(tmpdir(), 'bulwark-dcap-'));
  const savedExtraCa = process.env.NODE_EXTRA_CA_CERTS;
  try {
    const ns = lab.namespace('a');
    run('ip', ['-n', ns, 'addr', 'add', `${ADDRESS}/32`, 'dev', 'lo']);
    const cert = join(files, 'server.pem');
    const key = join(files, 'server.key');
    const made = spawnSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', `/CN=${ADDRESS}`, '-addext', `subjectAltName=IP:${ADDRESS}`], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);

    const server = lab.spawnIn(ns, process.execPath, [join(ROOT, 'test/e2e/fixtures/oversized-downloads.mjs'), cert, key, ADDRESS, String(PORT), String(TOTAL)]);
    let output = '';
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 30_000;
    while (!output.includes('listening') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.match(output, /listening/);
    /** How the server's last answer for `path` ended (it prints when the connection closes). */
    const served = async (path: string): Promise<Served> => {
      const until = Date.now() + 30_000;
      for (;;) {
        const found = output.split('\n').filter(Boolean).slice(1).map((line) => JSON.parse(line) as Served).filter((r) => r.path === path).at(-1);
        if (found || Date.now() > until) return found ?? { path, finished: true, sent: -1 };
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    // Bulwark (inherits the environment) trusts the test server's self-signed certificate.
    process.env.NODE_EXTRA_CA_CERTS = cert;
    lab.startBulwark(ns, await freePort());
    const url = (path: string) => `https://${ADDRESS}:${PORT}${path}`;

    // IDS: a small ruleset installs; the oversized one is refused with the reason, and installs nothing.
    const good = lab.call('POST', '/api/v1/ids/rulesets', { name: 'good', rule_format: 'suricata', source_url: url('/good.rules'), enabled: true });
    assert.deepEqual([good.rule_count, good.last_error], [1, null], JSON.stringify(good));
    const big = lab.call('POST', '/api/v1/ids/rulesets', { name: 'big', rule_format: 'suricata', source_url: url('/big.rules'), enabled: true });
    assert.equal(big.rule_count, 0, 'nothing of the oversized file was installed');
    assert.match(String(big.last_error), /^download from 11\.22\.33\.44:8443 refused: more than the 64 MiB allowed \(the transfer was stopped, nothing was kept\)$/);
    const rulesServed = await served('/big.rules');
    assert.equal(rulesServed.finished, false, `the server sent all ${TOTAL} bytes`);
    assert.ok(rulesServed.sent < TOTAL);

    // url_table: the good list is in force; an oversized list is refused and the last good copy stays.
    const alias = lab.call('POST', '/api/v1/aliases', { name: 'feed', alias_type: 'url_table', entries: [url('/good.txt')] });
    lab.call('POST', '/api/v1/rules', { action: 'block', direction: 'in', protocol: 'tcp', src_addr: '<feed>', dst_port_start: 9 });
    lab.call('POST', '/api/v1/reload');
    const before = inNamespace(ns, 'nft', ['list', 'table', 'inet', 'bulwark']);
    assert.match(before, /10\.7\.0\.1/);
    assert.match(before, /10\.7\.0\.2/);
    lab.call('PUT', `/api/v1/aliases/${alias.id}`, { name: 'feed', alias_type: 'url_table', entries: [url('/big.txt')] });
    lab.call('POST', '/api/v1/reload');
    const after = inNamespace(ns, 'nft', ['list', 'table', 'inet', 'bulwark']);
    assert.match(after, /10\.7\.0\.1/, 'the last good copy stays in force');
    assert.doesNotMatch(after, /10\.8\.\d+\.\d+/, 'addresses from the refused download reached the packet filter');
    const listServed = await served('/big.txt');
    assert.equal(listServed.finished, false, `the server sent all ${TOTAL} bytes`);
    const logged = lab.log.split('\n').some((line) => line.includes('url_table source could not be fetched') && line.includes('refused: more than the 64 MiB allowed'));
    assert.ok(logged, `the server log says why the source was not used\n${lab.log}`);
  } finally {
    if (savedExtraCa === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
    else process.env.NODE_EXTRA_CA_CERTS = savedExtraCa;
    await lab.cleanup();
    rmSync(files, { recursive: true, force: true });
  }
});

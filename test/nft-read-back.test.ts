/**
 * The kernel's table is read back in a worker thread (its listing is megabytes at 10,000 rules): the state it
 * answers is the one the same listing parses to here, a missing table is an empty state, a missing tool a failure,
 * and a closed reader lets the process end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NftReadBack } from '../src/platform/linux/nft-read-back.js';
import { canonicalNftState } from '../src/platform/linux/nft-listing.js';

const LISTING = `table inet bulwark {
\tset alias_web_v4 {
\t\ttype ipv4_addr
\t\tflags interval
\t\telements = { 10.2.0.0/24, 10.1.0.0/24 }
\t}
\tchain filter_in {
\t\ttype filter hook input priority filter; policy drop;
\t\tip saddr @alias_web_v4 tcp dport 443 accept
\t}
}
`;

function fakeNft(script: string): { path: string; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-read-back-'));
  const path = join(dir, 'nft');
  writeFileSync(path, `#!/bin/sh\n${script}\n`);
  chmodSync(path, 0o755);
  return { path, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

test('the worker reads the table back into the state the listing parses to', async () => {
  const listing = join(mkdtempSync(join(tmpdir(), 'bulwark-listing-')), 'listing');
  writeFileSync(listing, LISTING);
  const nft = fakeNft(`[ "$*" = "-s list table inet bulwark" ] || exit 2\ncat '${listing}'`);
  const reader = new NftReadBack(nft.path);
  try {
    const first = await reader.read();
    assert.deepEqual(first, { ok: true, state: canonicalNftState(LISTING) });
    assert.equal((await reader.read()).ok, true);
    assert.equal(reader.answered, 2, 'both reads were answered by the worker');
    const state = (first as { state: { objects: Record<string, { size: number }> } }).state;
    assert.equal(state.objects['set alias_web_v4'].size, 2);
  } finally {
    await reader.close();
    nft.dispose();
  }
});

test('no table is an empty state; a tool that cannot run is a failure naming it', async () => {
  const missing = fakeNft(`echo 'Error: No such file or directory; did you mean table ‘bulwark’ in family inet?' >&2\nexit 1`);
  const reader = new NftReadBack(missing.path);
  try {
    assert.deepEqual(await reader.read(), { ok: true, state: canonicalNftState('') });
  } finally {
    await reader.close();
    missing.dispose();
  }
  const absent = new NftReadBack('/nonexistent/nft');
  try {
    const result = await absent.read();
    assert.equal(result.ok, false);
    assert.equal(absent.answered, 1);
  } finally {
    await absent.close();
  }
});

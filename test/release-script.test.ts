/**
 * `npm run release` (scripts/release.ts): a signing key made with `--new-key`, then the release archive of a small
 * source tree (assembled by install/bulwark-install.sh `assemble`: production dependencies only) and its detached
 * signature, which verifies against a trusted-keys directory holding the public key and names that key; the
 * same archive with one byte changed does not verify.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './helpers/netns-lab.js';
import { verifyRelease } from '../src/areas/updates/release-signature.js';

const work = mkdtempSync(join(tmpdir(), 'bulwark-release-'));
after(() => rmSync(work, { recursive: true, force: true }));

function release(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/release.ts'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
  return result.stdout;
}

test('npm run release: a new key, the archive of the assembled tree and a signature naming the key that verifies', () => {
  const source = join(work, 'source');
  mkdirSync(join(source, 'dist'), { recursive: true });
  writeFileSync(join(source, 'dist/main.js'), 'console.log("bulwark");\n');
  writeFileSync(join(source, 'package.json'), JSON.stringify({ name: 'bulwark', version: '4.5.6', dependencies: { 'prod-dep': '1.0.0' }, devDependencies: { 'dev-dep': '1.0.0' } }));
  for (const dep of ['prod-dep', 'dev-dep']) {
    mkdirSync(join(source, 'node_modules', dep), { recursive: true });
    writeFileSync(join(source, 'node_modules', dep, 'package.json'), JSON.stringify({ name: dep, version: '1.0.0' }));
  }
  cpSync(join(ROOT, 'install'), join(source, 'install'), { recursive: true });

  const key = join(work, 'signing.key');
  assert.match(release('--new-key', key), /^signing key ([0-9a-f]{16}):/);
  const keyId = /^signing key ([0-9a-f]{16})/.exec(release('--new-key', join(work, 'other.key')))![1];
  assert.equal((readFileSync(key).length > 0), true);
  const out = join(work, 'out');
  const printed = release('--key', key, '--out', out, '--from', source, '--no-build');
  const archive = readFileSync(join(out, 'bulwark-4.5.6.tar.gz'));
  const signature = readFileSync(join(out, 'bulwark-4.5.6.tar.gz.sig'), 'utf8');
  const trusted = join(work, 'trusted-keys');
  mkdirSync(trusted);
  cpSync(`${key}.pub`, join(trusted, 'release.pub'));
  const { keyId: signer } = verifyRelease(archive, signature, trusted);
  assert.notEqual(signer, keyId, 'the other key signed nothing');
  assert.match(printed, new RegExp(`\\(key ${signer}\\)`));
  const tampered = Buffer.from(archive);
  tampered[100] ^= 0x01;
  assert.throws(() => verifyRelease(tampered, signature, trusted), /^HttpError: bad signature|bad signature/);
  const listing = spawnSync('tar', ['-tzf', join(out, 'bulwark-4.5.6.tar.gz')], { encoding: 'utf8' }).stdout.split('\n');
  for (const member of ['./package.json', './dist/main.js', './install/bulwark-supervise.sh', './node_modules/prod-dep/package.json']) assert.ok(listing.includes(member), `${member} is in the archive`);
  assert.ok(!listing.some((member) => member.includes('dev-dep')), 'development dependencies are pruned');
});

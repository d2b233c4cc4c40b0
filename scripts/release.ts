/**
 * `npm run release`: the release archive and its detached Ed25519 signature (docs/updates.md).
 *
 *   npm run release -- --key FILE [--out DIR] [--from DIR] [--no-build]
 *   npm run release -- --new-key FILE        a new signing key: FILE (private, 0600) and FILE.pub (to trust)
 *
 * The release tree is assembled by install/bulwark-install.sh (`assemble`: the built server and console, the
 * production node_modules, the install scripts and units; nothing is downloaded), packed as
 * bulwark-<version>.tar.gz and signed with the private key in FILE (PEM, PKCS#8; never kept in the repository) into
 * bulwark-<version>.tar.gz.sig, which names the key's id.
 */
import { spawnSync } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { keyIdOf, signRelease } from '../src/areas/updates/release-signature.js';

const repository = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function fail(message: string): never {
  process.stderr.write(`release: ${message}\n`);
  process.exit(1);
}

function newKey(file: string): void {
  if (existsSync(file)) fail(`${file} exists: not overwritten`);
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(`${file}.pub`, publicKey.export({ type: 'spki', format: 'pem' }), { mode: 0o644 });
  process.stdout.write(`signing key ${keyIdOf(publicKey)}: ${file} (keep it secret, outside the repository); trust it by copying ${file}.pub into /etc/bulwark/trusted-keys/\n`);
}

function release(keyFile: string, out: string, from: string, build: boolean): void {
  let keyText: Buffer;
  try {
    keyText = readFileSync(keyFile);
  } catch (error) {
    fail(`cannot read the signing key ${keyFile}: ${(error as Error).message}`);
  }
  const staging = mkdtempSync(join(tmpdir(), 'bulwark-release-'));
  try {
    const assemble = spawnSync('bash', [join(repository, 'install/bulwark-install.sh'), 'assemble', '--to', join(staging, 'tree'), '--from', from, ...(build ? [] : ['--no-build'])], { stdio: 'inherit' });
    if (assemble.status !== 0) fail('assembling the release tree failed');
    const version = (JSON.parse(readFileSync(join(staging, 'tree/package.json'), 'utf8')) as { version: string }).version;
    mkdirSync(out, { recursive: true });
    const archive = join(out, `bulwark-${version}.tar.gz`);
    // Owner root, names sorted, no timestamps from the build machine's users: the same tree packs the same way.
    const tar = spawnSync('tar', ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '-czf', archive, '-C', join(staging, 'tree'), '.'], { stdio: 'inherit' });
    if (tar.status !== 0) fail('tar failed');
    const signature = signRelease(readFileSync(archive), keyText);
    writeFileSync(`${archive}.sig`, signature);
    const keyId = (JSON.parse(signature) as { key_id: string }).key_id;
    process.stdout.write(`${archive}\n${archive}.sig (key ${keyId})\n`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

const { values } = parseArgs({
  options: { key: { type: 'string' }, out: { type: 'string' }, from: { type: 'string' }, 'no-build': { type: 'boolean' }, 'new-key': { type: 'string' } },
  strict: true,
});
if (values['new-key']) newKey(resolve(values['new-key']));
else if (values.key) {
  createPublicKey(readFileSync(values.key)); // a readable key, before the build
  release(resolve(values.key), resolve(values.out ?? 'release'), resolve(values.from ?? repository), !values['no-build']);
} else fail('usage: npm run release -- --key FILE [--out DIR] [--from DIR] [--no-build]   |   --new-key FILE');

/**
 * The certificates the proxy serves, copied where its own user may read them. The data directory (and
 * `<data-dir>/certs/`) is private to root, so Bulwark reads each certificate — from its file under the
 * certificate directories (opened without following symbolic links) or, by reference, from an ACME or local-CA
 * certificate — and writes it into the proxy's runtime directory (root:caddy 0640) under a name derived from
 * its content. A renewed certificate therefore changes the rendered configuration, and the reload that follows
 * makes Caddy serve it without a restart.
 */
import { createHash } from 'node:crypto';
import { constants, openSync, readFileSync, closeSync, fstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AppContext } from '../../context.js';
import type { ConfigData } from '../../store/config-store.js';
import type { InstalledCertificate } from '../../render/caddy/caddy.js';
import { ProxyRefusal } from '../../render/caddy/caddy-values.js';
import { writeDaemonFile, type DaemonRuntime } from '../../platform/daemon-runtime.js';
import { certPathProblem, certRoots } from '../../render/cert-paths.js';
import { symlinkProblem } from '../../render/confined-file.js';
import { isUnder } from '../../render/grammar.js';
import { keyFileRefusal } from './key-files.js';

const CERT_DIR = 'certs';

/** `acme:<id>` / `ca:<id>` split, or null. */
export function certSource(value: unknown): { kind: 'acme' | 'ca'; id: string } | null {
  const match = /^(acme|ca):([0-9a-f-]{36})$/.exec(String(value ?? ''));
  return match ? { kind: match[1] as 'acme' | 'ca', id: match[2] } : null;
}

/** A certificate file read as root, refused when it or a directory above it (below its root) is a symbolic link. */
function readConfined(path: unknown, where: string, dataDir: string): string {
  const problem = certPathProblem(path, dataDir);
  if (problem) throw new ProxyRefusal(`${where} ${problem}`);
  const text = String(path);
  const root = certRoots(dataDir).find((candidate) => isUnder(text, candidate))!;
  const link = symlinkProblem(text, root);
  if (link) throw new ProxyRefusal(`${where}: ${link}; symbolic links are not followed`);
  let fd: number;
  try {
    fd = openSync(text, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    throw new ProxyRefusal(`${where} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new ProxyRefusal(`${where} is not a regular file`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** The PEM certificate (with its chain) and key of one TLS certificate object. */
export function certificateMaterial(context: AppContext, item: ConfigData): { cert: string; key: string } {
  try {
    return materialOf(context, item);
  } catch (error) {
    // A referenced certificate removed behind the reference's back (an old release, a raw delete) is the
    // configuration's problem, named as such, not a missing route.
    if ((error as { statusCode?: number }).statusCode === 404) throw new ProxyRefusal(`TLS certificate ${String(item.name)}: ${String(item.source)} no longer exists`);
    throw error;
  }
}

function materialOf(context: AppContext, item: ConfigData): { cert: string; key: string } {
  const where = `TLS certificate ${String(item.name)}`;
  const source = certSource(item.source);
  if (source?.kind === 'acme') {
    const model = context.models.get('acme_cert');
    const object = model.find(source.id);
    const cert = model.secret(object, 'cert_pem');
    const key = model.secret(object, 'key_pem');
    if (!cert || !key) throw new ProxyRefusal(`${where}: ACME certificate ${source.id} has not been issued yet`);
    const chain = model.secret(object, 'chain_pem') ?? '';
    return { cert: chain ? `${cert.trimEnd()}\n${chain}` : cert, key };
  }
  if (source?.kind === 'ca') {
    const model = context.models.get('ca_cert');
    const object = model.find(source.id);
    if (object.data.status === 'revoked') throw new ProxyRefusal(`${where}: local CA certificate ${source.id} is revoked`);
    const key = model.secret(object, 'private_key_pem');
    if (!key) throw new ProxyRefusal(`${where}: local CA certificate ${source.id} has no key`);
    return { cert: String(object.data.certificate_pem), key };
  }
  const dataDir = context.config.dataDir;
  // Checked again where the key is read as root: a stored path from before the rule (an old version restored).
  const refusal = typeof item.key_file === 'string' ? keyFileRefusal(item.key_file, context.store, dataDir) : null;
  if (refusal) throw new ProxyRefusal(`${where} key_file ${refusal}`);
  return { cert: readConfined(item.cert_file, `${where} cert_file`, dataDir), key: readConfined(item.key_file, `${where} key_file`, dataDir) };
}

/** Writes every certificate into the runtime directory and returns where Caddy finds them. */
export function installCertificates(context: AppContext, runtime: DaemonRuntime, items: ConfigData[]): InstalledCertificate[] {
  return items.map((item) => {
    const { cert, key } = certificateMaterial(context, item);
    const digest = createHash('sha256').update(cert).update('\0').update(key).digest('hex').slice(0, 16);
    const base = `${String(item.name)}-${digest}`;
    return {
      name: String(item.name),
      certFile: writeDaemonFile(runtime, [CERT_DIR, `${base}.pem`], cert),
      keyFile: writeDaemonFile(runtime, [CERT_DIR, `${base}.key`], key),
    };
  });
}

/** Removes certificate copies no longer named by the running configuration. */
export function pruneCertificates(runtime: DaemonRuntime, keep: InstalledCertificate[]): void {
  const dir = join(runtime.dir, CERT_DIR);
  const wanted = new Set(keep.flatMap((cert) => [cert.certFile, cert.keyFile]));
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) if (!wanted.has(join(dir, name))) rmSync(join(dir, name), { force: true });
}

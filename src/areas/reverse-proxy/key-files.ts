/**
 * Which private keys a reverse-proxy TLS certificate may name by path. Bulwark reads the key as root and copies
 * it where the proxy's own user can read it, so a path is a request to hand a root-readable secret to `caddy`.
 * `proxy:write` may therefore name only keys Bulwark keeps or wrote itself: under its own certificate store
 * (`<data-dir>/certs/`, `/etc/bulwark/`), or the `key_path` of an ACME file export (export targets are
 * `settings:write`). Any other key under the certificate directories (another daemon's, the system's) must be
 * named on the key-file allow-list, which only `settings:write` changes. Certificates by reference (`source`)
 * need no path at all.
 */
import { join } from 'node:path';
import { Type } from 'typebox';
import type { ConfigStore } from '../../store/config-store.js';
import { certPathProblem } from '../../render/cert-paths.js';
import { ABSOLUTE_PATH_PATTERN, isUnder } from '../../render/grammar.js';

export const KEY_FILES_KIND = 'rp_key_files';

export const ProxyKeyFiles = Type.Object({
  paths: Type.Array(Type.String({ minLength: 1, maxLength: 1024, pattern: ABSOLUTE_PATH_PATTERN }), {
    maxItems: 256, default: [],
    description: 'key files (exact paths under the certificate directories) that TLS certificates of the reverse proxy may name besides Bulwark\'s own keys',
  }),
});

/** Bulwark's own certificate store: keys there were put there by Bulwark or by an administrator with a shell. */
export const ownKeyRoots = (dataDir: string): string[] => [`${join(dataDir, 'certs')}/`, '/etc/bulwark/'];

/** Why an entry of the allow-list cannot be stored, or null. */
export function allowListEntryProblem(path: unknown, dataDir: string): string | null {
  return certPathProblem(path, dataDir);
}

/** Why a TLS certificate may not name this key file (given the configuration it is checked in), or null. */
export function keyFileRefusal(path: string, store: ConfigStore, dataDir: string): string | null {
  if (ownKeyRoots(dataDir).some((root) => isUnder(path, root))) return null;
  const exported = store.list('acme_export_target').some((target) => {
    const config = target.data.config as Record<string, unknown> | undefined;
    return target.data.kind === 'file' && config?.key_path === path;
  });
  if (exported) return null;
  const allowed = store.getSingleton(KEY_FILES_KIND)?.paths;
  if (Array.isArray(allowed) && allowed.includes(path)) return null;
  return `is not a key Bulwark keeps: name a key under ${ownKeyRoots(dataDir).join(' or ')}, an ACME file export's key_path, or use source (acme:<id> or ca:<id>); other keys need an administrator to list them at /api/v1/reverse-proxy/tls/key-files`;
}

import { join } from 'node:path';
import { isCleanAbsolutePath, isUnder } from './grammar.js';

/** System directories where certificate files may be written or read from (the daemons that use them). */
export const SYSTEM_CERT_ROOTS = ['/etc/ssl/', '/etc/bulwark/', '/etc/nginx/', '/etc/haproxy/', '/etc/caddy/', '/etc/traefik/', '/etc/unbound/', '/etc/strongswan/', '/etc/swanctl/'] as const;
/** Certificate and key files carry one of these extensions, so no configuration file (`*.conf`, `*.yaml`) can be overwritten. */
export const CERT_EXTENSIONS = ['.pem', '.crt', '.cer', '.key'] as const;

/** The allowed roots: the system directories and `<data-dir>/certs/`. */
export const certRoots = (dataDir: string): string[] => [...SYSTEM_CERT_ROOTS, `${join(dataDir, 'certs')}/`];

/** Why `path` is not an acceptable certificate/key file path, or null. Symbolic links are checked where the file is opened. */
export function certPathProblem(path: unknown, dataDir: string): string | null {
  if (typeof path !== 'string' || !isCleanAbsolutePath(path)) return 'must be a clean absolute path (letters, digits, . _ + -; no .. or //)';
  if (!certRoots(dataDir).some((root) => isUnder(path, root))) return `must lie under ${certRoots(dataDir).join(', ')}`;
  if (!CERT_EXTENSIONS.some((extension) => path.endsWith(extension))) return `must end in ${CERT_EXTENSIONS.join(', ')}`;
  return null;
}

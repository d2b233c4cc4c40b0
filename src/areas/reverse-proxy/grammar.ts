import { join } from 'node:path';
import { isCleanAbsolutePath, isSingleLineText, isUnder } from '../../render/grammar.js';
import { certPathProblem } from '../../render/cert-paths.js';

/**
 * What the reverse proxy's JSON-in-a-string fields may hold (docs/reverse-proxy.md). They become YAML through
 * the yaml library, so structure cannot be injected; what is refused here is content the proxy would act on
 * outside its own configuration: keys that name a file and control characters in any key or string. Keys
 * naming a certificate, key or CA file take paths in the certificate directories only; ACME `storage` a .json
 * file in the proxy's own directories; every other file-naming key (users files, log files, directories,
 * plugins, providers) is refused.
 */
const CERT_FILE_KEYS = new Set(['ca', 'cas', 'cert', 'key', 'certfile', 'keyfile', 'cafiles', 'rootcas']);
const REFUSED_KEYS = new Set(['filepath', 'directory', 'dir', 'plugin', 'plugins', 'providers', 'storage']);
const namesAFile = (key: string) => REFUSED_KEYS.has(key.toLowerCase()) || /files?$/i.test(key);

/** Where ACME `storage` may point: the proxy's own state directories. */
export const storageRoots = (dataDir: string): string[] => ['/var/lib/bulwark/', `${join(dataDir, 'reverse-proxy')}/`];

function fileValueProblem(key: string, value: unknown, where: string, dataDir: string): string | null {
  const lower = key.toLowerCase();
  const values = Array.isArray(value) ? value : [value];
  if (CERT_FILE_KEYS.has(lower)) {
    for (const item of values) {
      const problem = certPathProblem(item, dataDir);
      if (problem) return `${where} ${problem}`;
    }
    return null;
  }
  if (lower === 'storage') {
    const ok = typeof value === 'string' && isCleanAbsolutePath(value) && value.endsWith('.json') && storageRoots(dataDir).some((root) => isUnder(value, root));
    return ok ? null : `${where} must be a .json file under ${storageRoots(dataDir).join(', ')}`;
  }
  return namesAFile(key) ? `${where}: keys that name a file are not allowed` : null;
}

/** Why a parsed JSON value cannot be rendered, with the path of the offending key, or null. */
export function proxyJsonProblem(value: unknown, dataDir: string, path = ''): string | null {
  if (typeof value === 'string') return isSingleLineText(value) ? null : `${path || 'value'} contains a control character`;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const problem = proxyJsonProblem(item, dataDir, `${path}[${index}]`);
      if (problem) return problem;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const where = path ? `${path}.${key}` : key;
      if (!isSingleLineText(key)) return `${where} has a control character in its key`;
      const problem = fileValueProblem(key, item, where, dataDir) ?? proxyJsonProblem(item, dataDir, where);
      if (problem) return problem;
    }
  }
  return null;
}

/** Object names, and references to them: `name` or `name@provider`. */
export const NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]*$';
export const REFERENCE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]*(@[A-Za-z0-9][A-Za-z0-9_-]*)?$';
export const isReference = (value: string) => new RegExp(REFERENCE_PATTERN).test(value);
/** `[host]:port[/tcp|/udp]`, host empty (all addresses), a name, IPv4 or bracketed IPv6. */
export const LISTEN_ADDRESS_PATTERN = '^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]*):[0-9]{1,5}(/(tcp|udp))?$';
/** Directories the access log may be written to (besides `<data-dir>/logs/`). */
export const ACCESS_LOG_ROOTS = ['/var/log/bulwark/'] as const;

import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { isIP } from 'node:net';
import { presetOverridesFromEnv, type PresetOverrides } from './auth/sso/presets.js';

export type PlatformName = 'simulated' | 'linux' | 'freebsd';
export const PLATFORMS: readonly PlatformName[] = ['simulated', 'linux', 'freebsd'];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface StartupConfig {
  host: string;
  port: number;
  /** The HTTPS listener (`--tls-listen`), or null when the API is served over plain HTTP only. */
  tlsListen: { host: string; port: number } | null;
  dataDir: string;
  /**
   * The daemons' runtime tree (`--runtime-dir`): unset, `/var/lib/bulwark-daemons/<12 hex of sha256 of the data
   * directory>` (src/platform/daemon-runtime.ts runtimeRoot() decides; nothing else builds the path).
   */
  runtimeDir?: string | null;
  platform: PlatformName;
  trustedProxies: string[];
  logLevel: LogLevel;
  /**
   * Prefix of the WireGuard interface names the appliance assigns (`wg` → wg0, wg1, …). Interface names are
   * global on a host (wireguard-go's control sockets live in /var/run/wireguard for every namespace), so
   * several appliances on one host (tests) each take their own.
   */
  wireguardPrefix: string;
  /** Seconds between checks that the kernel still holds the applied ruleset (0: no periodic check). */
  driftCheckSeconds: number;
  /**
   * The root under which the host's own files are written by the host settings (`/` on an appliance; another
   * directory for an image being prepared, where only files are written and the running system is left alone).
   */
  hostRoot: string;
  /**
   * The root the appliance is installed under (`/`: /opt/bulwark/releases, /opt/bulwark/current,
   * /etc/bulwark/trusted-keys): where self-updates unpack, switch and look for trusted signing keys (docs/updates.md).
   */
  installRoot: string;
  /** The root apt works in for OS updates (`/`: the machine's own packages; tests give a throw-away root). */
  aptRoot: string;
  /** Seconds a new release has to answer ready after the switch before it is rolled back automatically. */
  updateReadySeconds: number;
  /** Releases kept under the install root after a successful switch (the current one and the rollback target at least). */
  keepReleases: number;
  /** Single sign-on preset endpoint URLs from BULWARK_OAUTH_PRESET_{A,B}_* (see src/auth/sso/presets.ts). */
  oauthPresets: PresetOverrides;
  /**
   * Enrolment with a fleet controller at start (`--enrol URL --enrol-token-file PATH`, docs/fleet.md): the token is
   * read from the file only when it is spent, never from the command line or the environment, and never logged.
   */
  fleetEnrol: { controllerUrl: string; tokenFile: string } | null;
}

export class StartupError extends Error {}

/** Splits HOST:PORT, accepting a bracketed IPv6 host ("[::1]:8080"). */
export function parseListen(value: string, flag = '--listen'): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port < 0 || port > 65535) throw new StartupError(`${flag} must be HOST:PORT, got "${value}"`);
  return { host: match[1] ?? match[2], port };
}

/** Comma-separated IPs or CIDRs; anything else is a startup error rather than a silently ignored entry. */
export function parseTrustedProxies(value: string): string[] {
  const entries = value.split(',').map((s) => s.trim()).filter(Boolean);
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address);
    const maxPrefix = family === 6 ? 128 : 32;
    const prefixOk = prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= maxPrefix);
    if (!family || !prefixOk || extra !== undefined) {
      throw new StartupError(`--trusted-proxies: "${entry}" is not an IP address or CIDR`);
    }
  }
  return entries;
}

/** Flags win over environment variables, which win over defaults. */
export function loadStartupConfig(argv: string[], env: NodeJS.ProcessEnv): StartupConfig {
  const { values } = parseArgs({
    args: argv,
    options: {
      listen: { type: 'string' },
      'tls-listen': { type: 'string' },
      'data-dir': { type: 'string' },
      'runtime-dir': { type: 'string' },
      platform: { type: 'string' },
      'trusted-proxies': { type: 'string' },
      'log-level': { type: 'string' },
      'wireguard-prefix': { type: 'string' },
      'drift-check-interval': { type: 'string' },
      'host-root': { type: 'string' },
      'install-root': { type: 'string' },
      'apt-root': { type: 'string' },
      'update-ready-timeout': { type: 'string' },
      'keep-releases': { type: 'string' },
      enrol: { type: 'string' },
      'enrol-token-file': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const { host, port } = parseListen(values.listen ?? env.BULWARK_LISTEN ?? '0.0.0.0:8080');
  // Off unless set; `off` (or empty) in the environment file turns an installed appliance's listener off.
  const tlsText = (values['tls-listen'] ?? env.BULWARK_TLS_LISTEN ?? '').trim();
  const tlsListen = tlsText === '' || tlsText === 'off' ? null : parseListen(tlsText, '--tls-listen');
  const platform = values.platform ?? env.BULWARK_PLATFORM ?? 'simulated';
  if (!PLATFORMS.includes(platform as PlatformName)) {
    throw new StartupError(`--platform must be one of ${PLATFORMS.join(', ')}, got "${platform}"`);
  }
  const logLevel = values['log-level'] ?? env.BULWARK_LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    throw new StartupError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const wireguardPrefix = values['wireguard-prefix'] ?? env.BULWARK_WIREGUARD_PREFIX ?? 'wg';
  if (!/^[a-z][a-z0-9]{0,9}$/.test(wireguardPrefix)) {
    throw new StartupError(`--wireguard-prefix must be 1 to 10 lowercase letters and digits, starting with a letter, got "${wireguardPrefix}"`);
  }
  const driftText = values['drift-check-interval'] ?? env.BULWARK_DRIFT_CHECK_INTERVAL ?? '60';
  if (!/^\d{1,6}$/.test(driftText.trim())) {
    throw new StartupError(`--drift-check-interval must be a whole number of seconds (0 turns the periodic check off), got "${driftText}"`);
  }
  const hostRoot = values['host-root'] ?? env.BULWARK_HOST_ROOT ?? '/';
  if (!hostRoot.startsWith('/')) throw new StartupError(`--host-root must be an absolute directory, got "${hostRoot}"`);
  const readyText = values['update-ready-timeout'] ?? env.BULWARK_UPDATE_READY_TIMEOUT ?? '180';
  if (!/^\d{1,4}$/.test(readyText.trim()) || Number(readyText) < 5) {
    throw new StartupError(`--update-ready-timeout must be a whole number of seconds, at least 5, got "${readyText}"`);
  }
  const keepText = values['keep-releases'] ?? env.BULWARK_KEEP_RELEASES ?? '2';
  if (!/^\d{1,2}$/.test(keepText.trim()) || Number(keepText) < 2) {
    throw new StartupError(`--keep-releases must be a whole number, at least 2 (the current release and the rollback target), got "${keepText}"`);
  }
  const runtimeDir = values['runtime-dir'] ?? (env.BULWARK_RUNTIME_DIR || undefined);
  if (runtimeDir !== undefined && !runtimeDir.startsWith('/')) throw new StartupError(`--runtime-dir must be an absolute path, got "${runtimeDir}"`);
  const enrolUrl = (values.enrol ?? env.BULWARK_FLEET_ENROL_URL ?? '').trim();
  const enrolTokenFile = (values['enrol-token-file'] ?? env.BULWARK_FLEET_ENROL_TOKEN_FILE ?? '').trim();
  if ((enrolUrl === '') !== (enrolTokenFile === '')) throw new StartupError('--enrol and --enrol-token-file go together: the controller URL and the file holding the enrolment token');
  if (enrolUrl !== '' && !/^https:\/\/[^/?#@\s]+\/?$/.test(enrolUrl)) throw new StartupError(`--enrol must be https://host[:port] of the fleet controller, got "${enrolUrl}"`);
  if (enrolTokenFile !== '' && !enrolTokenFile.startsWith('/')) throw new StartupError(`--enrol-token-file must be an absolute path, got "${enrolTokenFile}"`);
  return {
    host,
    port,
    fleetEnrol: enrolUrl === '' ? null : { controllerUrl: enrolUrl, tokenFile: enrolTokenFile },
    hostRoot: resolve(hostRoot),
    tlsListen,
    installRoot: resolve(values['install-root'] ?? env.BULWARK_INSTALL_ROOT ?? '/'),
    aptRoot: resolve(values['apt-root'] ?? env.BULWARK_APT_ROOT ?? '/'),
    updateReadySeconds: Number(readyText.trim()),
    keepReleases: Number(keepText.trim()),
    driftCheckSeconds: Number(driftText.trim()),
    dataDir: resolve(values['data-dir'] ?? env.BULWARK_DATA_DIR ?? './data'),
    runtimeDir: runtimeDir === undefined ? null : resolve(runtimeDir),
    platform: platform as PlatformName,
    trustedProxies: parseTrustedProxies(values['trusted-proxies'] ?? env.BULWARK_TRUSTED_PROXIES ?? ''),
    logLevel: logLevel as LogLevel,
    wireguardPrefix,
    oauthPresets: presetOverridesFromEnv(env, (message) => new StartupError(message)),
  };
}

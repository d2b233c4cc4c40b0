import dgram from 'node:dgram';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

/**
 * Keeps a test that drives many operations with made-up inputs on this machine: name lookups, TCP/TLS
 * connections and UDP datagrams to anything but loopback fail at once (ENOTFOUND / ECONNREFUSED) and are
 * recorded, so a test can both stay off the network and say which operation tried to leave it.
 */
export interface NetworkGuard {
  /** Every refused destination, in order. */
  readonly attempts: string[];
  restore(): void;
}

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.', '']);

export function isLoopback(host: string | undefined): boolean {
  if (host === undefined) return true; // Node's default host is localhost
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (LOOPBACK_NAMES.has(bare)) return true;
  if (net.isIPv4(bare)) return bare.startsWith('127.');
  return bare === '::1' || bare === '::ffff:127.0.0.1';
}

function refusal(code: string, host: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`test network guard: ${host} is outside this machine`), { code });
}

/** Where a `socket.connect(...)` call goes: a host, or undefined for a Unix socket path. */
function connectTarget(args: unknown[]): { host?: string; local: boolean } {
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0]; // net.connect passes normalised args
  if (first !== null && typeof first === 'object') {
    const options = first as { path?: string; host?: string };
    return options.path ? { local: true } : { host: options.host, local: false };
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return { local: true }; // a Unix socket path
  return { host: typeof args[1] === 'string' ? args[1] : undefined, local: false };
}

export function forbidOutsideNetwork(): NetworkGuard {
  const attempts: string[] = [];
  const originalConnect = net.Socket.prototype.connect;
  const originalSend = dgram.Socket.prototype.send;
  const originalLookup = dns.lookup;
  const originalPromisesLookup = dns.promises.lookup;

  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const target = connectTarget(args);
    if (target.local || isLoopback(target.host)) return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
    attempts.push(`tcp ${target.host}`);
    process.nextTick(() => this.destroy(refusal('ECONNREFUSED', String(target.host))));
    return this;
  } as typeof net.Socket.prototype.connect;

  dgram.Socket.prototype.send = function guardedSend(this: dgram.Socket, ...args: unknown[]) {
    const host = args.find((arg, index) => index > 0 && typeof arg === 'string') as string | undefined;
    if (isLoopback(host)) return (originalSend as (...a: unknown[]) => void).apply(this, args);
    attempts.push(`udp ${host}`);
    const callback = args.find((arg) => typeof arg === 'function') as ((error: Error) => void) | undefined;
    if (callback) process.nextTick(() => callback(refusal('ECONNREFUSED', String(host))));
  } as typeof dgram.Socket.prototype.send;

  dns.lookup = function guardedLookup(hostname: string, ...rest: unknown[]) {
    if (isLoopback(hostname) || net.isIP(hostname)) return (originalLookup as (...a: unknown[]) => void)(hostname, ...rest);
    attempts.push(`dns ${hostname}`);
    const callback = rest.find((arg) => typeof arg === 'function') as (error: Error) => void;
    process.nextTick(() => callback(refusal('ENOTFOUND', hostname)));
  } as typeof dns.lookup;

  dns.promises.lookup = async function guardedPromisesLookup(hostname: string, options?: unknown) {
    if (isLoopback(hostname) || net.isIP(hostname)) return (originalPromisesLookup as (...a: unknown[]) => Promise<unknown>)(hostname, options);
    attempts.push(`dns ${hostname}`);
    throw refusal('ENOTFOUND', hostname);
  } as typeof dns.promises.lookup;

  // `import { lookup } from 'node:dns'` binds the export: make the bindings see the replacements.
  syncBuiltinESMExports();
  return {
    attempts,
    restore() {
      net.Socket.prototype.connect = originalConnect;
      dgram.Socket.prototype.send = originalSend;
      dns.lookup = originalLookup;
      dns.promises.lookup = originalPromisesLookup;
      syncBuiltinESMExports();
    },
  };
}

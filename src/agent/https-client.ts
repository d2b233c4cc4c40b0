import { request } from 'node:https';
import { isIP } from 'node:net';
import { resolveGuardedHost } from '../net/guarded-host.js';

export interface TlsMaterial {
  /** The controller's CA (PEM); absent only for the first fetch of the CA itself, which is then pinned by hash. */
  ca?: string;
  cert?: string;
  key?: string;
}

/** Where a controller URL goes, through the outbound guard: the checked address and the name TLS verifies. */
export async function guardedTarget(url: URL, allowList: readonly string[]) {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const { address } = await resolveGuardedHost(host, allowList);
  return { address, servername: isIP(host) ? undefined : host, host: url.host };
}

/**
 * One HTTPS request to the controller. With `tls.ca` the controller's certificate must chain to it and name the
 * host; without it (only to fetch the CA, whose hash the enrolment token pins) nothing is trusted from the answer
 * until the caller has checked that hash.
 */
export async function controllerRequest(
  base: string,
  path: string,
  options: { method: 'GET' | 'POST'; body?: unknown; tls: TlsMaterial; allowList: readonly string[]; timeoutMs?: number },
): Promise<{ status: number; text: string }> {
  const url = new URL(path, base);
  const target = await guardedTarget(url, options.allowList);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const outgoing = request({
      host: target.address, servername: target.servername, port: url.port || 443, path: url.pathname, method: options.method,
      headers: { host: target.host, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) },
      ca: options.tls.ca, cert: options.tls.cert, key: options.tls.key,
      rejectUnauthorized: options.tls.ca !== undefined,
      checkServerIdentity: target.servername ? undefined : (_host, certificate) => checkAddressIdentity(url.hostname.replace(/^\[|\]$/g, ''), certificate.subjectaltname),
      timeout: options.timeoutMs ?? 15_000,
    }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > 1024 * 1024) response.destroy(new Error('controller answer larger than 1 MiB'));
        else chunks.push(chunk);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`controller ${url.host} did not answer in time`)));
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

/** An address literal must be among the certificate's IP subject alternative names (Node checks names, not this). */
export function checkAddressIdentity(address: string, subjectAltName: string | undefined): Error | undefined {
  const addresses = (subjectAltName ?? '').split(', ').filter((entry) => entry.startsWith('IP Address:')).map((entry) => entry.slice('IP Address:'.length));
  return addresses.includes(address) ? undefined : new Error(`the controller's certificate does not name ${address}`);
}

import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { rootCertificates, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { Agent, buildConnector, fetch, type RequestInit, type Response } from 'undici';
import { badRequest, HttpError } from '../core/errors.js';
import { allowListOf, isAllowed } from './special-addresses.js';
import { capDownload, DEFAULT_DOWNLOAD_CAP_BYTES } from './download-cap.js';
import { normalisePin, spkiSha256 } from './spki-pin.js';
import { safeEqual } from '../core/crypto.js';

export interface OutboundPolicy {
  /** IPs/CIDRs an admin allowed although private or otherwise special. */
  allowList?: readonly string[];
  /** Plain http is refused unless the caller's setting explicitly allows it (e.g. a local Ollama). */
  allowHttp?: boolean;
  /** Maximum number of same-host redirects followed; default 3. */
  maxRedirects?: number;
  timeoutMs?: number;
  /** Extra CA certificates (PEM) trusted besides the public roots, e.g. an on-premises identity provider's. */
  extraCa?: readonly string[];
  /** The local address to connect from (a gateway probe leaves through its WAN's source-address rule). */
  localAddress?: string;
  /** Most bytes of the response body read before the transfer is stopped (src/net/download-cap.ts); default 64 MiB. */
  maxBytes?: number;
  /**
   * The SHA-256 of the one certificate public key (SPKI) the server may present (a paired cluster peer): the
   * chain is not checked against any CA, the key is; any other key ends the connection before a byte is sent.
   */
  pinnedSpkiSha256?: string;
  /**
   * TLS with a private service (the fleet controller): trust only `ca` (PEM), and present the client certificate
   * `cert` with its `key` when given. `ca: null` checks no certificate: only for a caller that verifies the answer
   * itself before trusting any of it (the agent's fetch of the controller's CA, which its enrolment token pins).
   */
  privateTls?: { ca: string | null; cert?: string; key?: string };
}

/** A refused outbound request is the caller's configuration at fault: 400 with the reason. */
export class OutboundRefused extends HttpError {
  constructor(message: string) {
    super(400, `outbound request refused: ${message}`);
  }
}

/**
 * The one way the appliance fetches a URL: https by default, redirects only to the same host, and the
 * address checked at connect time (after DNS, so a name that resolves to 127.0.0.1 or 169.254.169.254 is
 * refused even if it resolved elsewhere a moment earlier). The answer's body is capped at `maxBytes`, counted
 * on the bytes read (src/net/download-cap.ts).
 */
export async function outboundFetch(url: string, init: RequestInit = {}, policy: OutboundPolicy = {}): Promise<Response> {
  const allowList = allowListOf(policy.allowList ?? []);
  let target = parseTarget(url, policy);
  const connectOptions: ConnectionOptions = {
    // Node's `ca` replaces the default roots, so the public roots are passed along with the extra ones.
    ...(policy.extraCa?.length ? { ca: [...rootCertificates, ...policy.extraCa] } : {}),
    ...(policy.localAddress ? { localAddress: policy.localAddress } : {}),
    ...(policy.privateTls
      ? { ca: policy.privateTls.ca ?? undefined, rejectUnauthorized: policy.privateTls.ca !== null, cert: policy.privateTls.cert, key: policy.privateTls.key }
      : {}),
    lookup: (hostname, options, callback) => {
      dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error) return callback(error, '', 4);
        const list = addresses as unknown as LookupAddress[];
        const refused = list.find((entry) => !isAllowed(entry.address, allowList));
        if (refused) {
          return callback(new OutboundRefused(`${hostname} resolves to ${refused.address}, a blocked address: add it to allowed_addresses to permit it`), '', 4);
        }
        if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
        callback(null, list[0].address, list[0].family);
      });
    },
  };
  const dispatcher = new Agent({
    connect: policy.pinnedSpkiSha256 === undefined ? connectOptions : pinnedConnector(connectOptions, policy.pinnedSpkiSha256, (message) => new OutboundRefused(message)),
  });
  try {
    for (let hop = 0; ; hop++) {
      const literal = isIP(target.hostname.replace(/^\[|\]$/g, ''));
      if (literal && !isAllowed(target.hostname.replace(/^\[|\]$/g, ''), allowList)) {
        throw new OutboundRefused(`${target.hostname} is a blocked address: add it to allowed_addresses to permit it`);
      }
      const response = await fetch(target, {
        ...init,
        redirect: 'manual',
        dispatcher,
        signal: init.signal ?? AbortSignal.timeout(policy.timeoutMs ?? 15_000),
      }).catch((error: Error & { cause?: unknown }) => {
        if (error.cause instanceof OutboundRefused) throw error.cause;
        throw error;
      });
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) return await capDownload(response, policy.maxBytes ?? DEFAULT_DOWNLOAD_CAP_BYTES, target);
      const next = parseTarget(new URL(location, target).toString(), policy);
      if (next.host !== target.host) throw new OutboundRefused(`redirect to another host (${next.host}) refused`);
      if (hop >= (policy.maxRedirects ?? 3)) throw new OutboundRefused('too many redirects');
      target = next;
    }
  } finally {
    dispatcher.close().catch(() => undefined);
  }
}

function parseTarget(url: string, policy: OutboundPolicy): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest(`"${url}" is not a URL`);
  }
  if (parsed.protocol === 'https:') return parsed;
  if (parsed.protocol === 'http:' && policy.allowHttp) return parsed;
  throw new OutboundRefused(`${parsed.protocol}// is not allowed for outbound requests (https only)`);
}

/**
 * An undici connector that completes the TLS handshake without a CA check and then accepts the socket only when
 * the server's certificate carries the pinned key. Sessions are not resumed, so every connection shows its
 * certificate again.
 */
function pinnedConnector(
  options: ConnectionOptions,
  pin: string,
  refusal: (message: string) => Error,
): buildConnector.connector {
  const connect = buildConnector({ ...options, rejectUnauthorized: false, maxCachedSessions: 0 });
  const wanted = normalisePin(pin);
  return (target, callback) => {
    connect(target, (error, socket) => {
      if (error || !socket) return callback(error ?? refusal('no connection'), null);
      let presented: string | null = null;
      try {
        const certificate = (socket as TLSSocket).getPeerX509Certificate?.();
        presented = certificate ? spkiSha256(certificate) : null;
      } catch {
        presented = null;
      }
      if (presented === null || !safeEqual(presented, wanted)) {
        socket.destroy();
        return callback(refusal(`the certificate ${target.hostname}:${target.port} presented does not carry the pinned key (pinned ${wanted.slice(0, 16)}…, presented ${presented ? `${presented.slice(0, 16)}…` : 'none'})`), null);
      }
      callback(null, socket);
    });
  };
}

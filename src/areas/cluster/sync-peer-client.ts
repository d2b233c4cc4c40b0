/**
 * Calls to the paired peer: HTTPS only, through the outbound guard, to the address the pairing recorded (allowed
 * for this connection alone, besides the administrator's outbound allow-list), with the peer's certificate key
 * pinned. Any other certificate ends the connection before the request is sent.
 */
import { isIP } from 'node:net';
import { HttpError } from '../../core/errors.js';
import type { ConfigStore } from '../../store/config-store.js';
import { adminAllowList } from '../../net/admin-allow-list.js';
import { outboundFetch, OutboundRefused } from '../../net/outbound.js';

export interface PeerTarget {
  address: string;
  port: number;
  fingerprint: string;
  /** The API key presented (Authorization: ApiKey …); none for the pairing call, which carries its one-time code. */
  key?: string;
}

/** The peer answered, but not with success: its status and its `error`. */
export class PeerAnswered extends Error {
  constructor(readonly status: number, readonly reason: string) {
    super(`the peer answered ${status}: ${reason}`);
  }
}

/** The peer could not be reached, or its certificate is not the pinned one: 502 with the reason. */
export class PeerUnreachable extends HttpError {
  constructor(reason: string, readonly pinRefused = false) {
    super(502, reason);
  }
}

const PEER_TIMEOUT_MS = 20_000;
/** A whole configuration: as an import may be. */
const PEER_MAX_BYTES = 64 * 1024 * 1024;

export const peerUrl = (target: Pick<PeerTarget, 'address' | 'port'>, path: string): string =>
  `https://${isIP(target.address) === 6 ? `[${target.address}]` : target.address}:${target.port}${path}`;

/** One request to the peer; the parsed JSON (or text) of a 2xx answer. */
export async function peerRequest(store: ConfigStore, target: PeerTarget, method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<unknown> {
  let response: Response;
  try {
    response = await outboundFetch(peerUrl(target, path), {
      method,
      headers: {
        ...(target.key ? { authorization: `ApiKey ${target.key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }, { allowList: [...adminAllowList(store), target.address], pinnedSpkiSha256: target.fingerprint, timeoutMs: PEER_TIMEOUT_MS, maxBytes: PEER_MAX_BYTES, maxRedirects: 0 }) as unknown as Response;
  } catch (error) {
    const refused = error instanceof OutboundRefused;
    const reason = refused ? (error as Error).message : `${(error as Error).message}${(error as { cause?: Error }).cause ? ` (${(error as { cause?: Error }).cause!.message})` : ''}`;
    throw new PeerUnreachable(`peer ${target.address}:${target.port}: ${reason}`, refused && /pinned key/.test(reason));
  }
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    // a text answer (the snapshot hash)
  }
  if (response.status >= 200 && response.status < 300) return parsed;
  const reason = parsed !== null && typeof parsed === 'object' && typeof (parsed as { error?: unknown }).error === 'string' ? (parsed as { error: string }).error : `HTTP ${response.status}`;
  throw new PeerAnswered(response.status, reason);
}

/**
 * Pairing two nodes for configuration sync, with no trust on first use: the administrator opens a one-time code on
 * the node to be paired (B), which also shows B's certificate pin; on the other node (A) they give B's address,
 * pin and code. A connects to B pinned to that key and presents the code; only then does B record A (at the address
 * the call came from, with the pin A sends over that authenticated call). Each side creates the API key the other
 * presents to it (system role, ha:manage only) and both receive the same secret the snapshot keys derive from.
 */
import { hostname } from 'node:os';
import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import { randomHex, safeEqual, sha256Hex } from '../../core/crypto.js';
import { badRequest, conflict, forbidden, HttpError, notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { normalisePin, spkiSha256 } from '../../net/spki-pin.js';
import type { ApiTlsService } from '../tls/service.js';
import { PeerAnswered, peerRequest, PeerUnreachable } from './sync-peer-client.js';
import type { PeerRecord, SyncStateStore } from './sync-state.js';
import { createInboundKey } from './sync-keys.js';

/** How long a pairing code stays open, and how many wrong codes close it. */
export const PAIRING_CODE_TTL_MS = 10 * 60_000;
const PAIRING_ATTEMPTS = 5;

export interface PairingAnswer {
  name: string;
  key: string;
}

export interface PairingCall {
  code: string;
  name: string;
  port: number;
  fingerprint: string;
  key: string;
  pair_secret: string;
}

export interface PairBody {
  name: string;
  address: string;
  port: number;
  fingerprint: string;
  pairing_code: string;
}

export class Pairing {
  /** The open code (its hash), in memory only: a restart closes it. */
  private open: { hash: string; expiresAt: number; attempts: number } | null = null;

  constructor(private readonly context: AppContext, private readonly state: SyncStateStore, private readonly tls: ApiTlsService) {}

  nodeName(): string {
    const general = this.context.store.getSingleton('system_general');
    return typeof general?.hostname === 'string' && general.hostname !== '' ? general.hostname : hostname();
  }

  /** This node's HTTPS port and certificate pin (412 without the HTTPS listener: a peer could not pin it). */
  ownEndpoint(): { port: number; fingerprint: string } {
    const listen = this.context.config.tlsListen;
    const certificate = this.tls.servedCertificate();
    if (!listen || !certificate) throw new HttpError(412, 'configuration sync needs the HTTPS listener: start Bulwark with --tls-listen HOST:PORT (BULWARK_TLS_LISTEN)');
    return { port: listen.port, fingerprint: spkiSha256(certificate) };
  }

  private assertUnpaired(): void {
    const peer = this.state.peer();
    if (peer) throw conflict(`this node is already paired with ${peer.name} (${peer.address}); DELETE /api/v1/cluster/nodes/${peer.id} first`);
  }

  /** Opens a one-time code (replacing any open one) and shows this node's pin to compare on the other node. */
  newCode(): { code: string; fingerprint: string; port: number; expires_at: string } {
    this.assertUnpaired();
    const { port, fingerprint } = this.ownEndpoint();
    const code = `bwpair_${randomHex(16)}`;
    const expiresAt = this.context.clock.now() + PAIRING_CODE_TTL_MS;
    this.open = { hash: sha256Hex(code), expiresAt, attempts: 0 };
    return { code, fingerprint, port, expires_at: isoTime(expiresAt) };
  }

  /** The peer's call (B's side): the code taken once, then A recorded at the address the call came from. */
  accept(call: PairingCall, from: { address: string; overTls: boolean }): PairingAnswer {
    if (!from.overTls) throw forbidden('pairing is accepted over HTTPS only');
    const open = this.open;
    if (!open || open.expiresAt <= this.context.clock.now()) {
      this.open = null;
      throw forbidden('no pairing code is open on this node (POST /api/v1/cluster/pairing-code opens one for 10 minutes)');
    }
    if (!safeEqual(sha256Hex(call.code), open.hash)) {
      if (++open.attempts >= PAIRING_ATTEMPTS) this.open = null;
      throw forbidden('wrong pairing code');
    }
    this.open = null;
    this.assertUnpaired();
    const id = newId();
    const inbound = createInboundKey(this.context, id, 'cluster pairing');
    this.state.setPeer({
      id, name: call.name, address: from.address.replace(/^::ffff:/, ''), port: call.port, fingerprint: normalisePin(call.fingerprint),
      outbound_key: this.context.sealer.seal(call.key), pair_secret: this.context.sealer.seal(call.pair_secret), inbound_key_id: inbound.id,
      created_at: isoTime(this.context.clock.now()), created_by: `pairing call from ${from.address}`, awaiting_first_sync: true,
    });
    this.context.log.info({ peer: call.name, address: from.address }, 'cluster: paired (accepted a pairing call)');
    return { name: this.nodeName(), key: inbound.key };
  }

  /** A's side: connects to B pinned to the fingerprint the administrator gave, presents B's code, records B. */
  async pair(body: PairBody, actor: string): Promise<PeerRecord> {
    this.assertUnpaired();
    const own = this.ownEndpoint();
    const id = newId();
    const inbound = createInboundKey(this.context, id, 'cluster pairing');
    const pairSecret = randomHex(32);
    const target = { address: body.address, port: body.port, fingerprint: normalisePin(body.fingerprint) };
    let answer: PairingAnswer;
    try {
      answer = await peerRequest(this.context.store, target, 'POST', '/api/v1/cluster/pairing', {
        code: body.pairing_code, name: this.nodeName(), port: own.port, fingerprint: own.fingerprint, key: inbound.key, pair_secret: pairSecret,
      } satisfies PairingCall) as PairingAnswer;
    } catch (error) {
      this.context.identity.apiKeys.remove(inbound.id);
      if (error instanceof PeerUnreachable && error.pinRefused) throw badRequest(`body.fingerprint: ${error.message}`);
      if (error instanceof PeerAnswered) {
        if (error.status === 403) throw badRequest(`body.pairing_code: the peer refused it: ${error.reason}`);
        if (error.status === 409) throw conflict(`the peer refused the pairing: ${error.reason}`);
        throw new HttpError(502, `the peer refused the pairing: ${error.message}`);
      }
      throw error;
    }
    if (typeof answer?.key !== 'string' || typeof answer.name !== 'string') {
      this.context.identity.apiKeys.remove(inbound.id);
      throw new HttpError(502, 'the peer answered the pairing call without a key');
    }
    const peer: PeerRecord = {
      id, name: body.name, address: body.address, port: body.port, fingerprint: target.fingerprint,
      outbound_key: this.context.sealer.seal(answer.key), pair_secret: this.context.sealer.seal(pairSecret), inbound_key_id: inbound.id,
      created_at: isoTime(this.context.clock.now()), created_by: actor,
    };
    this.state.setPeer(peer);
    this.context.log.info({ peer: body.name, address: body.address }, 'cluster: paired');
    return peer;
  }

  /** Forgets the peer and revokes the key it presented (the peer's own record stays until it is unpaired there). */
  unpair(id: string): void {
    const peer = this.state.peer();
    if (!peer || peer.id !== id) throw notFound(`cluster node ${id} not found`);
    if (this.context.identity.apiKeys.liveById(peer.inbound_key_id)) this.context.identity.apiKeys.remove(peer.inbound_key_id);
    this.state.setPeer(null);
  }
}

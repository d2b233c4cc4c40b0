/**
 * cert-push (wire-format §10): the primary of a pair renews its ACME certificates and sends each renewed one to
 * the peer at once, over the pinned channel, with the private key sealed for the peer (AES-256-GCM under the pair's
 * key, bound to the certificate's id) and the whole body under the pair's HMAC. The peer installs it as a renewal
 * of its own would be (export targets, then the stored material); the backup never renews on its own.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { canonicalJson } from '../../core/canonical-json.js';
import { isoTime } from '../../core/clock.js';
import { badRequest, conflict, forbidden } from '../../core/errors.js';
import type { Identity } from '../../http/access.js';
import { assertValid, compileBodyValidator } from '../../model/validation.js';
import type { AcmeService } from '../acme/service.js';
import { unwrapSecret, wrapSecret, type ExportKeys } from '../config/export-format.js';
import type { AppContext } from '../../context.js';
import type { ClusterSync } from './sync-service.js';
import { peerRequest } from './sync-peer-client.js';

const KEY_FIELD = 'private_key_pem';
const ACME_KIND = 'acme_cert';
const PEM_MAX = 64 * 1024;

export const CertPushBody = Type.Object({
  cert_id: Type.String({ minLength: 1, maxLength: 64 }),
  fullchain_pem: Type.String({ minLength: 1, maxLength: PEM_MAX, description: 'the certificate, then its chain' }),
  private_key_pem: Type.String({ minLength: 1, maxLength: PEM_MAX, pattern: '^pw:v1:', description: 'sealed for this node with the pair\'s key (never in clear on the wire)' }),
  sent_at: Type.String({ maxLength: 40 }),
  integrity: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'HMAC-SHA256 of the rest under the pair\'s key' }),
}, { additionalProperties: false });
export type CertPushBody = Static<typeof CertPushBody>;
const validateBody = compileBodyValidator(CertPushBody);

export interface CertPushOutcome { at: string; cert_id: string; ok: boolean; error: string | null }

const hmacHex = (keys: ExportKeys, text: string): string => createHmac('sha256', keys.mac).update(text).digest('hex');
const splitFullchain = (pem: string): { cert_pem: string; chain_pem: string } => {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
  if (blocks.length === 0) throw badRequest('body.fullchain_pem: no PEM certificate');
  return { cert_pem: blocks[0]!.trimEnd() + '\n', chain_pem: blocks.slice(1).join('').trimEnd() + (blocks.length > 1 ? '\n' : '') };
};

export function sealCertPush(keys: ExportKeys, certId: string, material: { cert_pem: string; chain_pem: string; key_pem: string }, sentAt: string): CertPushBody {
  const fullchain = material.chain_pem ? `${material.cert_pem.trimEnd()}\n${material.chain_pem}` : material.cert_pem;
  const body = { cert_id: certId, fullchain_pem: fullchain, private_key_pem: wrapSecret(keys, material.key_pem, ACME_KIND, certId, KEY_FIELD), sent_at: sentAt };
  return { ...body, integrity: hmacHex(keys, canonicalJson(body)) };
}

export function openCertPush(keys: ExportKeys, body: unknown): { certId: string; material: { cert_pem: string; chain_pem: string; key_pem: string } } {
  assertValid(validateBody, body);
  const { integrity, ...rest } = body as CertPushBody;
  if (!timingSafeEqual(Buffer.from(hmacHex(keys, canonicalJson(rest)), 'hex'), Buffer.from(integrity, 'hex'))) {
    throw badRequest('body.integrity: the certificate was not sent by the paired peer, or was modified on the way (HMAC check failed)');
  }
  const key = unwrapSecret(keys, rest.private_key_pem, ACME_KIND, rest.cert_id, KEY_FIELD);
  return { certId: rest.cert_id, material: { ...splitFullchain(rest.fullchain_pem), key_pem: key } };
}

export class CertPush {
  constructor(private readonly context: AppContext, private readonly sync: ClusterSync, private readonly acme: AcmeService) {
    // The backup of a pair does not renew: the primary does and pushes the certificate here.
    acme.renewalGate = async () => (this.sync.state.peer() && !(await this.sync.isSender())
      ? `this node is the backup of a high-availability pair: the primary renews ACME certificates and pushes them here (POST /api/v1/cluster/cert-push)`
      : null);
    acme.onRenewed((id) => void this.afterRenewal(id).catch((error: Error) => context.log.warn({ err: error.message, cert: id }, 'cluster: pushing the renewed certificate failed')));
  }

  private async afterRenewal(id: string): Promise<void> {
    if (!this.sync.state.peer() || !(await this.sync.isSender())) return;
    await this.push(id);
  }

  /** Sends one certificate to the peer; the outcome is recorded (GET /cluster/status config_sync.last_cert_push). */
  async push(id: string): Promise<CertPushOutcome> {
    const peer = this.sync.requirePeer();
    const at = isoTime(this.context.clock.now());
    const material = this.acme.material(id);
    let outcome: CertPushOutcome;
    const keys = this.sync.keys(peer);
    if (!material) outcome = { at, cert_id: id, ok: false, error: `certificate ${id} has not been issued yet` };
    else if (keys.outbound !== 'ok') outcome = { at, cert_id: id, ok: false, error: `not sent: ${keys.problem}` };
    else {
      try {
        await peerRequest(this.context.store, this.sync.target(peer), 'POST', '/api/v1/cluster/cert-push', sealCertPush(this.sync.pairKeys(peer), id, material, at));
        outcome = { at, cert_id: id, ok: true, error: null };
      } catch (error) {
        outcome = { at, cert_id: id, ok: false, error: (error as Error).message };
      }
    }
    this.sync.state.updateState({ last_cert_push: outcome });
    if (outcome.ok) this.context.log.info({ peer: peer.name, cert: id }, 'cluster: certificate pushed to the peer');
    else this.context.log.warn({ peer: peer.name, cert: id, err: outcome.error }, 'cluster: certificate push failed');
    return outcome;
  }

  /** POST /cluster/cert-push on the receiving node: the peer's key only; never on the node holding the addresses. */
  async receive(body: unknown, caller: Identity | null | undefined): Promise<void> {
    const peer = this.sync.requirePeer();
    if (caller?.credential !== 'api_key' || caller.credentialId !== peer.inbound_key_id) {
      throw forbidden(`only the paired peer (${peer.name}) pushes certificates, with the key it received at pairing`);
    }
    if (await this.sync.isSender()) throw conflict('this node is the primary (it holds the virtual addresses): it renews its certificates and does not take them');
    const { certId, material } = openCertPush(this.sync.pairKeys(peer), body);
    await this.acme.install(certId, material);
    this.context.log.info({ peer: peer.name, cert: certId }, 'cluster: installed the certificate the peer pushed');
  }
}

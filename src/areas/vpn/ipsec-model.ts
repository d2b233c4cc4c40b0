import type { AppContext } from '../../context.js';
import { badRequest } from '../../core/errors.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { ConfigData, ConfigStore } from '../../store/config-store.js';
import { isCidr } from '../../render/grammar.js';
import { displayName, leadingAlgorithms, proposalProblem, type ProposalKind } from '../../render/strongswan/strongswan-proposals.js';
import { isIkeId } from '../../render/strongswan/swanctl.js';
import { DEFAULT_AH_PROPOSALS, DEFAULT_ESP_PROPOSALS, DEFAULT_IKE_PROPOSALS, IpsecComputed, IpsecStored } from './schema.js';

/** `any`, an IP address or a CIDR: what IKE accepts as the address of a side (alias tables mean nothing to it). */
const isSaAddress = (value: string) => value === 'any' || isCidr(value);

/** A traffic-selector list from the request: an array, or a comma-separated string. */
function selectors(value: unknown, field: string): string[] {
  const entries = (Array.isArray(value) ? value.map(String) : String(value).split(',')).map((s) => s.trim()).filter(Boolean);
  for (const entry of entries) if (!isCidr(entry)) throw badRequest(`body.${field}: "${entry.slice(0, 64)}" is not a CIDR`);
  return entries;
}

/** The request's fields in their stored form: aliases resolved, lists parsed, the pre-shared key checked. */
export function ipsecFields(body: ConfigData): ConfigData {
  const data: ConfigData = {};
  for (const field of ['name', 'local_addr', 'remote_addr'] as const) if (body[field] !== undefined) data[field] = String(body[field]).trim();
  if (body.protocol !== undefined) {
    const protocol = String(body.protocol).toLowerCase().replace(/[+_-]/g, '');
    const map: Record<string, string> = { esp: 'esp', ah: 'ah', espah: 'esp_ah' };
    if (!map[protocol]) throw badRequest('body.protocol must be one of: esp, ah, esp_ah');
    data.protocol = map[protocol];
  }
  if (body.mode !== undefined) {
    const mode = String(body.mode).toLowerCase();
    if (mode !== 'tunnel' && mode !== 'transport') throw badRequest('body.mode must be one of: tunnel, transport');
    data.mode = mode;
  }
  for (const field of ['local_ts', 'remote_ts'] as const) if (body[field] !== undefined) data[field] = selectors(body[field], field);
  for (const field of ['auth_method', 'certificate_id', 'local_id', 'remote_id', 'start_action'] as const) if (body[field] !== undefined) data[field] = body[field];
  for (const field of ['ike_proposals', 'esp_proposals', 'ah_proposals'] as const) {
    if (body[field] !== undefined) data[field] = String(body[field]).split(',').map((p) => p.trim()).join(',');
  }
  if (body.psk !== undefined) {
    if (typeof body.psk !== 'string' || !/^[\x20-\x7e]{16,256}$/.test(body.psk)) throw badRequest('body.psk must be 16 to 256 printable ASCII characters');
    data.psk = body.psk;
  }
  return data;
}

/**
 * enc_algo and auth_algo, the reference's display fields, named after the proposals actually rendered: the ESP
 * encryption, and the ESP integrity (AH's with AH; the IKE SA's when the ESP cipher is combined-mode).
 */
export function derivedAlgorithms(data: ConfigData): { enc_algo: string; auth_algo: string } {
  const protocol = String(data.protocol ?? 'esp');
  const esp = leadingAlgorithms(String(data.esp_proposals ?? DEFAULT_ESP_PROPOSALS));
  const ah = leadingAlgorithms(String(data.ah_proposals ?? DEFAULT_AH_PROPOSALS));
  const ike = leadingAlgorithms(String(data.ike_proposals ?? DEFAULT_IKE_PROPOSALS));
  if (protocol === 'ah') return { enc_algo: 'none', auth_algo: displayName(ah.integrity) };
  const integrity = protocol === 'esp_ah' ? ah.integrity : esp.integrity === 'aead' ? ike.integrity : esp.integrity;
  return { enc_algo: displayName(esp.encryption), auth_algo: displayName(integrity) };
}

/**
 * Everything that makes an SA one charon can load, checked before it is stored (400 naming the field). An SA
 * created the reference's way, without credentials, is stored; it is not loaded until it has a key (GET
 * /vpn/ipsec/status says so).
 */
function checkSa(data: ConfigData, store: ConfigStore): void {
  for (const field of ['local_addr', 'remote_addr']) {
    if (!isSaAddress(String(data[field]))) throw badRequest(`body.${field}: "${String(data[field]).slice(0, 64)}" is not an address (any, an IP address or a CIDR)`);
  }
  for (const [field, kind] of [['ike_proposals', 'ike'], ['esp_proposals', 'esp'], ['ah_proposals', 'ah']] as [string, ProposalKind][]) {
    if (data[field] === undefined) continue;
    const problem = proposalProblem(String(data[field]), kind);
    if (problem) throw badRequest(`body.${field}: ${problem}`);
  }
  for (const field of ['local_id', 'remote_id']) {
    if (typeof data[field] === 'string' && !isIkeId(data[field] as string)) throw badRequest(`body.${field} must be an IP address, host name, email address or distinguished name`);
  }
  for (const field of ['local_ts', 'remote_ts']) {
    for (const entry of (data[field] as string[] | undefined) ?? []) if (!isCidr(entry)) throw badRequest(`body.${field}: "${entry}" is not a CIDR`);
  }
  if (data.auth_method === 'cert') {
    if (typeof data.certificate_id !== 'string') throw badRequest('body.certificate_id is required for auth_method cert: the id of a certificate issued by the local CA');
    const cert = store.get('ca_cert', data.certificate_id);
    if (!cert) throw badRequest(`body.certificate_id: certificate ${data.certificate_id} does not exist`);
    if (cert.data.status === 'revoked') throw badRequest(`body.certificate_id: certificate ${data.certificate_id} is revoked`);
  }
  if (data.start_action === 'start' && (String(data.remote_addr) === 'any' || String(data.remote_addr).includes('/'))) {
    throw badRequest('body.start_action: start needs remote_addr to be one address to connect to');
  }
}

/** Why an SA cannot be loaded into charon yet, or null. */
export function missingCredentials(data: ConfigData): string | null {
  if (data.auth_method === 'cert') return null;
  return typeof data.psk === 'string' ? null : 'no pre-shared key: set psk, or use auth_method cert';
}

/** The IPsec SA kind: its schema, the sealed pre-shared key, the certificate it names, and its checks. */
export function declareIpsecModel(context: AppContext): CollectionModel {
  return context.models.collection({
    kind: 'ipsec_sa', noun: 'IPsec SA', writeAccess: 'vpn:write',
    schema: IpsecStored,
    unique: [{ field: 'name', caseInsensitive: true }],
    writeOnly: ['psk'],
    references: [{ field: 'certificate_id', kind: 'ca_cert' }],
    computed: {
      schema: IpsecComputed,
      add: (object) => ({
        src_addr: object.data.local_addr as string,
        dst_addr: object.data.remote_addr as string,
        spi_in: object.data.spi as number,
        spi_out: object.data.spi as number,
        has_psk: typeof object.data.psk === 'string',
      }),
    },
    validate: (data, { store }) => checkSa(data, store),
  });
}

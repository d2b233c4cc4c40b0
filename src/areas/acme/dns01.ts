/**
 * DNS-01 through the configured DNS providers: a TXT record `_acme-challenge.<name>` added before the CA is
 * asked to validate and removed afterwards. Cloudflare is driven through its API (through the outbound guard);
 * `manual` stops the order with the record the operator must publish; the other kinds say they are not driven.
 */
import { outboundFetch } from '../../net/outbound.js';

export interface DnsProviderAccess {
  kind: string;
  zone: string;
  token: string | undefined;
  extra: Record<string, unknown>;
}

export interface TxtPublisher {
  add(name: string, value: string): Promise<void>;
  remove(name: string, value: string): Promise<void>;
}

const CLOUDFLARE = 'https://api.cloudflare.com/client/v4';

function cloudflare(provider: DnsProviderAccess): TxtPublisher {
  if (!provider.token) throw new Error('the DNS provider has no api_token');
  const headers = { authorization: `Bearer ${provider.token}`, 'content-type': 'application/json' };
  const records = new Map<string, string>();
  let zoneId = typeof provider.extra.zone_id === 'string' ? provider.extra.zone_id : '';
  const zone = async () => {
    if (zoneId) return zoneId;
    const answer = (await (await outboundFetch(`${CLOUDFLARE}/zones?name=${encodeURIComponent(provider.zone)}`, { headers })).json()) as { result?: { id: string }[] };
    zoneId = answer.result?.[0]?.id ?? '';
    if (!/^[A-Za-z0-9]{1,64}$/.test(zoneId)) throw new Error(`zone ${provider.zone} not found with this token`);
    return zoneId;
  };
  return {
    async add(name, value) {
      const created = (await (await outboundFetch(`${CLOUDFLARE}/zones/${await zone()}/dns_records`, { method: 'POST', headers, body: JSON.stringify({ type: 'TXT', name, content: value, ttl: 60 }) })).json()) as { success?: boolean; result?: { id: string } };
      if (!created.success || !created.result || !/^[A-Za-z0-9]{1,64}$/.test(created.result.id)) throw new Error(`Cloudflare did not add the TXT record ${name}`);
      records.set(`${name} ${value}`, created.result.id);
    },
    async remove(name, value) {
      const id = records.get(`${name} ${value}`);
      if (!id) return;
      await outboundFetch(`${CLOUDFLARE}/zones/${await zone()}/dns_records/${id}`, { method: 'DELETE', headers });
      records.delete(`${name} ${value}`);
    },
  };
}

/** The TXT publisher of a provider, or an error saying what the operator must do instead. */
export function txtPublisher(provider: DnsProviderAccess): TxtPublisher {
  if (provider.kind === 'cloudflare') return cloudflare(provider);
  if (provider.kind === 'manual') {
    return {
      async add(name, value) {
        throw new Error(`MANUAL_DNS_ACTION_REQUIRED: publish TXT ${name} "${value}", then renew again`);
      },
      async remove() {},
    };
  }
  throw new Error(`${provider.kind} DNS updates are not driven in this release; use cloudflare or manual`);
}

/**
 * DNS-01 TXT records through DigitalOcean's DNS API (v2, JSON, bearer token in `api_token`); every request goes
 * through the outbound guard. Records are created under the zone (`/domains/{zone}/records`) with a name
 * relative to it and deleted by the id DigitalOcean returned.
 */
import { outboundFetch } from '../../net/outbound.js';
import { dnsApiEndpoint, dnsApiPolicy } from './dns-api-endpoint.js';
import type { DnsProviderAccess, TxtPublisher } from './dns01.js';

const API = 'https://api.digitalocean.com';
/** DigitalOcean's smallest TTL. */
const TTL = 30;

export function digitalOceanPublisher(provider: DnsProviderAccess): TxtPublisher {
  if (!provider.token) throw new Error('the DNS provider has no api_token');
  const base = dnsApiEndpoint(provider.extra, API);
  if (typeof base !== 'string') throw new Error(base.error);
  const policy = dnsApiPolicy(provider.extra, provider.allowList);
  const headers = { authorization: `Bearer ${provider.token}`, 'content-type': 'application/json' };
  const records = new Map<string, number>();
  const domain = encodeURIComponent(provider.zone);
  /** The record's name relative to the zone (`_acme-challenge.www` in `example.org`). */
  const relative = (name: string) => {
    const suffix = `.${provider.zone.toLowerCase()}`;
    if (name.toLowerCase() === provider.zone.toLowerCase()) return '@';
    if (!name.toLowerCase().endsWith(suffix)) throw new Error(`${name} is not in the zone ${provider.zone}`);
    return name.slice(0, -suffix.length);
  };
  return {
    async add(name, value) {
      const response = await outboundFetch(`${base}/v2/domains/${domain}/records`, { method: 'POST', headers, body: JSON.stringify({ type: 'TXT', name: relative(name), data: value, ttl: TTL }) }, policy);
      const answer = (await response.json().catch(() => ({}))) as { domain_record?: { id?: unknown }; message?: unknown };
      const id = answer.domain_record?.id;
      if (!response.ok || typeof id !== 'number' || !Number.isSafeInteger(id)) {
        throw new Error(`DigitalOcean did not add the TXT record ${name} (HTTP ${response.status}${typeof answer.message === 'string' ? `: ${answer.message.replace(/[^\x20-\x7e]/g, '').slice(0, 120)}` : ''})`);
      }
      records.set(`${name} ${value}`, id);
    },
    async remove(name, value) {
      const id = records.get(`${name} ${value}`);
      if (id === undefined) return;
      const response = await outboundFetch(`${base}/v2/domains/${domain}/records/${id}`, { method: 'DELETE', headers }, policy);
      if (!response.ok && response.status !== 404) throw new Error(`DigitalOcean did not remove the TXT record ${name} (HTTP ${response.status})`);
      records.delete(`${name} ${value}`);
    },
  };
}

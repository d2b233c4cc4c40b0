/**
 * DNS-01 through the configured DNS providers: a TXT record `_acme-challenge.<name>` added before the CA is
 * asked to validate and removed afterwards. Cloudflare is driven through its API (through the outbound guard);
 * RFC 2136 servers through nsupdate with TSIG; Route 53 and DigitalOcean through their APIs (dns01-route53.ts,
 * dns01-digitalocean.ts); `manual` stops the order with the record the operator must publish.
 */
import { outboundFetch } from '../../net/outbound.js';
import { resolveGuardedHost } from '../../net/guarded-host.js';
import { nsupdateScript, TSIG_ALGORITHMS } from '../../render/nsupdate/nsupdate.js';
import { sendDnsUpdate } from '../../platform/nsupdate.js';
import { route53Publisher } from './dns01-route53.js';
import { digitalOceanPublisher } from './dns01-digitalocean.js';

export interface DnsProviderAccess {
  kind: string;
  zone: string;
  token: string | undefined;
  /** The second secret (route53's aws_secret_key). */
  secret?: string | undefined;
  extra: Record<string, unknown>;
  /** Private networks the outbound guard lets through (the ACME account's allowed_networks). */
  allowList: readonly string[];
}

/** `extra` of an rfc2136 provider: the primary server (IP[:port]), the TSIG key's name and algorithm. */
export function rfc2136Settings(extra: Record<string, unknown>): { server: string; port: number; keyName: string; algorithm: string } | string {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[0-9.]+)(?::([0-9]{1,5}))?$/.exec(String(extra.server ?? ''));
  if (!match) return 'extra.server must be the primary server as IP or IP:port';
  const algorithm = String(extra.algorithm ?? 'hmac-sha256');
  if (!(TSIG_ALGORITHMS as readonly string[]).includes(algorithm)) return `extra.algorithm must be one of ${TSIG_ALGORITHMS.join(', ')}`;
  if (typeof extra.key_name !== 'string' || !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(extra.key_name)) return 'extra.key_name must be the TSIG key name';
  return { server: match[1].replace(/^\[|\]$/g, ''), port: Number(match[2] ?? 53), keyName: extra.key_name, algorithm };
}

/** RFC 2136 dynamic updates (BIND, Knot, PowerDNS …) signed with TSIG; the server is checked by the outbound guard. */
function rfc2136(provider: DnsProviderAccess): TxtPublisher {
  const settings = rfc2136Settings(provider.extra);
  if (typeof settings === 'string') throw new Error(settings);
  if (!provider.token) throw new Error('the DNS provider has no api_token (the TSIG secret)');
  const update = async (operation: 'add' | 'delete', name: string, value: string) => {
    const { address } = await resolveGuardedHost(settings.server, provider.allowList);
    await sendDnsUpdate(nsupdateScript({ ...settings, server: address, zone: provider.zone, secret: provider.token!, operation, name, value }));
  };
  return { add: (name, value) => update('add', name, value), remove: (name, value) => update('delete', name, value) };
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
  if (provider.kind === 'rfc2136') return rfc2136(provider);
  if (provider.kind === 'route53') return route53Publisher({ ...provider, secret: provider.secret });
  if (provider.kind === 'digitalocean') return digitalOceanPublisher(provider);
  if (provider.kind === 'manual') {
    return {
      async add(name, value) {
        throw new Error(`MANUAL_DNS_ACTION_REQUIRED: publish TXT ${name} "${value}", then renew again`);
      },
      async remove() {},
    };
  }
  throw new Error(`${provider.kind} DNS updates are not driven`);
}

/**
 * DNS-01 TXT records in Amazon Route 53 with the AWS SDK's Route 53 client (SigV4 signing, XML): `api_token` is
 * the access key id and `aws_secret_key` the secret, `extra.region` (default us-east-1) and `extra.zone_id`
 * (else looked up by the zone's name). Every request goes through the outbound guard (OutboundAwsHandler sends
 * the signed request with outboundFetch).
 */
import { ChangeResourceRecordSetsCommand, ListHostedZonesByNameCommand, Route53Client } from '@aws-sdk/client-route-53';
import { OutboundAwsHandler } from '../../net/aws-http-handler.js';
import { dnsApiEndpoint, dnsApiPolicy } from './dns-api-endpoint.js';
import type { DnsProviderAccess, TxtPublisher } from './dns01.js';

const TTL = 60;

export function route53Publisher(provider: DnsProviderAccess & { secret: string | undefined }): TxtPublisher {
  if (!provider.token) throw new Error('the DNS provider has no api_token (the AWS access key id)');
  if (!provider.secret) throw new Error('the DNS provider has no aws_secret_key');
  const endpoint = dnsApiEndpoint(provider.extra, '');
  if (typeof endpoint !== 'string') throw new Error(endpoint.error);
  const region = typeof provider.extra.region === 'string' && /^[a-z0-9-]{1,32}$/.test(provider.extra.region) ? provider.extra.region : 'us-east-1';
  const client = new Route53Client({
    region,
    credentials: { accessKeyId: provider.token, secretAccessKey: provider.secret },
    ...(endpoint ? { endpoint } : {}),
    maxAttempts: 2,
    requestHandler: new OutboundAwsHandler(dnsApiPolicy(provider.extra, provider.allowList)) as never,
  });
  let zoneId = typeof provider.extra.zone_id === 'string' ? provider.extra.zone_id : '';
  const zone = async () => {
    if (zoneId) return zoneId;
    const answer = await client.send(new ListHostedZonesByNameCommand({ DNSName: provider.zone, MaxItems: 1 }));
    const found = answer.HostedZones?.find((hosted) => hosted.Name?.replace(/\.$/, '').toLowerCase() === provider.zone.toLowerCase());
    zoneId = found?.Id?.replace(/^\/hostedzone\//, '') ?? '';
    if (!/^[A-Z0-9]{1,64}$/i.test(zoneId)) throw new Error(`hosted zone ${provider.zone} not found with these credentials`);
    return zoneId;
  };
  const change = async (action: 'UPSERT' | 'DELETE', name: string, value: string) => {
    await client.send(new ChangeResourceRecordSetsCommand({
      HostedZoneId: await zone(),
      ChangeBatch: {
        Comment: 'Bulwark ACME DNS-01',
        // A TXT value is a quoted character-string; ACME's values are base64url, so no quote or backslash occurs.
        Changes: [{ Action: action, ResourceRecordSet: { Name: name, Type: 'TXT', TTL, ResourceRecords: [{ Value: `"${value}"` }] } }],
      },
    }));
  };
  return {
    add: (name, value) => change('UPSERT', name, value),
    remove: (name, value) => change('DELETE', name, value),
  };
}

/**
 * DNS-01 through Route 53 and DigitalOcean, proven against stand-in API servers on loopback that check every
 * request (a real provider is never contacted): `POST /acme/dns-providers/{id}/test` adds the TXT record with the
 * right name, value and TTL and deletes it again; Route 53's requests carry a SigV4 Authorization header for the
 * stored access key; secrets stay write-only; an endpoint outside the outbound guard's rules is refused.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';

interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: string }

/** An HTTP server on loopback that records each request and answers with `answer`. */
async function standIn(answer: (request: Seen) => { status: number; type?: string; body?: string }): Promise<{ server: Server; base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body };
      seen.push(entry);
      const reply = answer(entry);
      response.writeHead(reply.status, reply.type ? { 'content-type': reply.type } : {});
      response.end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

let t: AreaApp;
const servers: Server[] = [];
before(async () => {
  t = await startAreaApp();
  // The stand-ins listen on loopback, which the outbound guard refuses unless the account allows it.
  assert.equal((await t.request('POST', '/api/v1/acme/account', { contact_email: 'admin@example.org', allowed_networks: ['127.0.0.1/32'] })).statusCode, 200);
});
after(async () => {
  for (const server of servers) server.close();
  await t.close();
});

const R53 = 'https://route53.amazonaws.com/doc/2013-04-01/';
const xmlField = (xml: string, tag: string) => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(xml)?.[1];

test('route53: SigV4-signed requests through the guard; hosted zone looked up by name; TXT upserted then deleted', async () => {
  const api = await standIn((request) => {
    if (request.method === 'GET' && request.url.startsWith('/2013-04-01/hostedzonesbyname')) {
      return { status: 200, type: 'text/xml', body: `<?xml version="1.0"?><ListHostedZonesByNameResponse xmlns="${R53}"><HostedZones><HostedZone><Id>/hostedzone/Z0B16S</Id><Name>example.org.</Name><CallerReference>b16s</CallerReference></HostedZone></HostedZones><IsTruncated>false</IsTruncated><MaxItems>1</MaxItems></ListHostedZonesByNameResponse>` };
    }
    if (request.method === 'POST' && /^\/2013-04-01\/hostedzone\/Z0B16S\/rrset\/?$/.test(request.url)) {
      return { status: 200, type: 'text/xml', body: `<?xml version="1.0"?><ChangeResourceRecordSetsResponse xmlns="${R53}"><ChangeInfo><Id>/change/C1</Id><Status>PENDING</Status><SubmittedAt>2024-01-01T00:00:00.000Z</SubmittedAt></ChangeInfo></ChangeResourceRecordSetsResponse>` };
    }
    return { status: 404, type: 'text/xml', body: `<ErrorResponse xmlns="${R53}"><Error><Type>Sender</Type><Code>NoSuchHostedZone</Code><Message>no</Message></Error></ErrorResponse>` };
  });
  servers.push(api.server);
  const created = await t.request('POST', '/api/v1/acme/dns-providers', { name: 'r53', kind: 'route53', zone: 'example.org', api_token: 'AKIDB16STEST', aws_secret_key: 'b16s-secret-value', extra: { endpoint: api.base, allow_http: true } });
  assert.equal(created.statusCode, 201, created.body);
  const provider = json(created);
  assert.deepEqual([provider.has_token, provider.has_secret], [true, true]);
  assert.ok(!created.body.includes('b16s-secret-value') && !created.body.includes('AKIDB16STEST'), 'secrets are write-only');

  const answer = json(await t.request('POST', `/api/v1/acme/dns-providers/${provider.id}/test`));
  assert.deepEqual(answer, { ok: true, message: 'TXT add+remove OK' });
  assert.equal(api.seen.length, 3, api.seen.map((r) => `${r.method} ${r.url}`).join('\n'));
  const [lookup, upsert, remove] = api.seen;
  assert.match(lookup.url, /dnsname=example\.org/);
  for (const request of api.seen) {
    assert.match(String(request.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIDB16STEST\/\d{8}\/us-east-1\/route53\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(request.headers).includes('b16s-secret-value'), 'the secret signs, it is never sent');
  }
  for (const [request, action] of [[upsert, 'UPSERT'], [remove, 'DELETE']] as const) {
    assert.equal(request.method, 'POST');
    assert.equal(xmlField(request.body, 'Action'), action);
    assert.equal(xmlField(request.body, 'Name'), '_acme-bulwark-test.example.org');
    assert.equal(xmlField(request.body, 'Type'), 'TXT');
    assert.equal(xmlField(request.body, 'TTL'), '60');
    assert.equal(xmlField(request.body, 'Value'), '&quot;bulwark-test&quot;');
  }

  // Without the secret the test says what is missing, and nothing is sent.
  await t.request('PUT', `/api/v1/acme/dns-providers/${provider.id}`, { aws_secret_key: '' });
  assert.deepEqual(json(await t.request('POST', `/api/v1/acme/dns-providers/${provider.id}/test`)), { ok: false, message: 'the DNS provider has no aws_secret_key' });
  assert.equal(api.seen.length, 3);
});

test('digitalocean: bearer token, record created relative to the zone with its TTL, then deleted by its id', async () => {
  const api = await standIn((request) => {
    if (request.method === 'POST' && request.url === '/v2/domains/example.net/records') return { status: 201, type: 'application/json', body: JSON.stringify({ domain_record: { id: 4242, type: 'TXT' } }) };
    if (request.method === 'DELETE' && request.url === '/v2/domains/example.net/records/4242') return { status: 204 };
    return { status: 404, type: 'application/json', body: JSON.stringify({ id: 'not_found', message: 'The resource you were accessing could not be found.' }) };
  });
  servers.push(api.server);
  const provider = json(await t.request('POST', '/api/v1/acme/dns-providers', { name: 'do', kind: 'digitalocean', zone: 'example.net', api_token: 'do-b16s-token', extra: { endpoint: api.base, allow_http: true } }));
  assert.equal(provider.has_token, true);
  assert.deepEqual(json(await t.request('POST', `/api/v1/acme/dns-providers/${provider.id}/test`)), { ok: true, message: 'TXT add+remove OK' });
  assert.deepEqual(api.seen.map((r) => `${r.method} ${r.url}`), ['POST /v2/domains/example.net/records', 'DELETE /v2/domains/example.net/records/4242']);
  for (const request of api.seen) assert.equal(request.headers.authorization, 'Bearer do-b16s-token');
  assert.deepEqual(JSON.parse(api.seen[0].body), { type: 'TXT', name: '_acme-bulwark-test', data: 'bulwark-test', ttl: 30 });

  // A zone the token does not hold: the provider's refusal, one line, ok false.
  const other = json(await t.request('POST', '/api/v1/acme/dns-providers', { name: 'do2', kind: 'digitalocean', zone: 'example.com', api_token: 'do-b16s-token', extra: { endpoint: api.base, allow_http: true } }));
  const refused = json(await t.request('POST', `/api/v1/acme/dns-providers/${other.id}/test`));
  assert.equal(refused.ok, false);
  assert.match(refused.message, /DigitalOcean did not add the TXT record _acme-bulwark-test\.example\.com \(HTTP 404: The resource you were accessing could not be found\.\)/);
});

test('API endpoints: https only unless allow_http, no path; loopback refused by the outbound guard when not allowed', async () => {
  const plain = await t.request('POST', '/api/v1/acme/dns-providers', { name: 'p', kind: 'digitalocean', zone: 'example.net', api_token: 'x', extra: { endpoint: 'http://127.0.0.1:9' } });
  assert.equal(plain.statusCode, 400);
  assert.match(json(plain).error, /body\.extra\.endpoint must use https/);
  const path = await t.request('POST', '/api/v1/acme/dns-providers', { name: 'p', kind: 'route53', zone: 'example.net', extra: { endpoint: 'https://api.example/evil?x=1' } });
  assert.equal(path.statusCode, 400);
  assert.match(json(path).error, /body\.extra\.endpoint must be https:\/\/host\[:port\] without a path/);
  assert.equal((await t.request('POST', '/api/v1/acme/dns-providers', { name: 'p', kind: 'route53', zone: 'example.net', extra: { region: 'us-east-1; x' } })).statusCode, 400);

  // The guard: a loopback endpoint the account does not allow is refused before anything is sent.
  const guarded = json(await t.request('POST', '/api/v1/acme/dns-providers', { name: 'g', kind: 'digitalocean', zone: 'example.net', api_token: 'x', extra: { endpoint: 'https://127.0.0.2:9' } }));
  const answer = json(await t.request('POST', `/api/v1/acme/dns-providers/${guarded.id}/test`));
  assert.equal(answer.ok, false);
  assert.match(answer.message, /blocked address/);
});

/**
 * The Linux gateway probes against real answerers on loopback (the probe's interface is `lo`): ICMP with the
 * ping binary, TCP connect, HTTP status through the outbound guard, DNS with dig against a small UDP responder;
 * and each one's failure when nothing answers.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { createSocket } from 'node:dgram';
import { probeGateway } from '../src/platform/gateway-probes.js';
import { systemSkip } from './helpers/system-skip.js';

const needs = (...programs: string[]) => systemSkip('the gateway probe', { programs });

const tcp = createTcpServer((socket) => socket.end()).listen(0, '127.0.0.1');
const http = createHttpServer((request, response) => {
  response.statusCode = request.url === '/' ? 204 : 503;
  response.end();
}).listen(0, '127.0.0.1');
// A DNS responder that answers every query NOERROR with no records (the header is all dig needs).
const dns = createSocket('udp4').on('message', (query, peer) => {
  const answer = Buffer.from(query);
  answer[2] = 0x81; // QR, RD
  answer[3] = 0x80; // RA, rcode 0
  dns.send(answer, peer.port, peer.address);
});
dns.bind(0, '127.0.0.1');
after(() => {
  tcp.close();
  http.close();
  dns.close();
});
const port = (server: { address(): AddressInfo | string | null }) => (server.address() as AddressInfo).port;
// Loopback is special: the probes below reach it because their allow-list (the administrator's) names it.
const base = { target: '127.0.0.1', interface: 'lo', timeout_ms: 1000, expect: null, port: null, allow_list: ['127.0.0.1'] };

test('icmp: one ping through the interface; no reply within the timeout is a failure naming the target', { skip: needs('ping') }, async (t) => {
  const ok = await probeGateway({ ...base, kind: 'icmp' });
  assert.equal(ok.success, true, ok.error ?? '');
  assert.ok(ok.rtt_ms !== null && ok.rtt_ms >= 0, `a success reports its round trip: ${ok.rtt_ms}`);
  t.diagnostic(`ping over loopback: ${ok.rtt_ms} ms`);
  // TEST-NET-1 is not on loopback: nothing answers.
  const none = await probeGateway({ ...base, kind: 'icmp', target: '192.0.2.77' });
  assert.equal(none.success, false);
  assert.match(none.error!, /192\.0\.2\.77|unreachable|Network/i);
});

test('tcp: a connect is success with its time; a closed port is a failure', async () => {
  const ok = await probeGateway({ ...base, kind: 'tcp', port: port(tcp) });
  assert.equal(ok.success, true, ok.error ?? '');
  const unlisted = await probeGateway({ ...base, kind: 'tcp', port: port(tcp), allow_list: [] });
  assert.deepEqual([unlisted.success, /blocked address/.test(unlisted.error!)], [false, true], 'loopback is refused unless allow-listed');
  const closed = createTcpServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => closed.once('listening', resolve));
  const unused = port(closed);
  closed.close();
  const refused = await probeGateway({ ...base, kind: 'tcp', port: unused });
  assert.deepEqual([refused.success, /ECONNREFUSED/.test(refused.error!)], [false, true]);
});

test('http: the status must be monitor_expect (0 = any 2xx/3xx), fetched through the outbound guard', async () => {
  const url = `http://127.0.0.1:${port(http)}`;
  assert.equal((await probeGateway({ ...base, kind: 'http', target: `${url}/`, expect: '204' })).success, true);
  assert.equal((await probeGateway({ ...base, kind: 'http', target: `${url}/`, expect: '0' })).success, true);
  const wrong = await probeGateway({ ...base, kind: 'http', target: `${url}/down`, expect: '0' });
  assert.deepEqual([wrong.success, wrong.error], [false, 'HTTP 503, expected 200-399']);
  const fallback = await probeGateway({ ...base, kind: 'http', port: port(http) });
  assert.deepEqual([fallback.success, fallback.error], [false, 'HTTP 204, expected 200'], 'default expectation is 200');
});

test('dns: dig asks the target from the interface address; an answer is success, silence is a failure', { skip: needs('dig') }, async () => {
  const ok = await probeGateway({ ...base, kind: 'dns', port: port(dns), expect: 'example.org' });
  assert.equal(ok.success, true, ok.error ?? '');
  assert.equal(typeof ok.rtt_ms, 'number');
  const silent = await probeGateway({ ...base, kind: 'dns', port: port(tcp), expect: 'example.org' });
  assert.equal(silent.success, false);
  assert.match(silent.error!, /no DNS answer from 127\.0\.0\.1/);
});

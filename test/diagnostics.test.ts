/**
 * Diagnostics (issue 34 item 2, docs/diagnostics.md): hostile values are 400s naming their field on every
 * platform; the simulated platform refuses to pretend; on linux, ping, traceroute, a DNS lookup, a TCP test and
 * a packet capture really run against loopback, as nobody, and the per-account run limit answers 429.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { createSocket } from 'node:dgram';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { headersWithPermissions } from './helpers/auth.js';
import { systemSkip } from './helpers/system-skip.js';
import { RunLimiter } from '../src/areas/diagnostics/run-limiter.js';

const SSE = { accept: 'text/event-stream' };

test('hostile or malformed values are refused with 400 naming the field; a viewer may not run; the simulated platform answers 503', async () => {
  const t = await startAreaApp();
  after(() => t.close());
  const post = (path: string, payload: object, headers = t.headers) =>
    t.app.inject({ method: 'POST', url: `/api/v1/diagnostics/${path}`, headers: { ...headers, ...SSE }, payload });
  const refusals: [string, object, RegExp][] = [
    ['ping', { host: '-f' }, /body\.host/],
    ['ping', { host: '127.0.0.1', interface: '-I' }, /body\.interface/],
    ['ping', { host: '127.0.0.1; reboot' }, /body\.host/],
    ['ping', { host: '127.0.0.1', count: 1000 }, /count/],
    ['traceroute', { host: '--help' }, /body\.host/],
    ['dns', { name: '+short' }, /body\.name/],
    ['dns', { name: 'example.com', server: '-f/etc/shadow' }, /body\.server/],
    ['dns', { name: 'example.com', type: 'AXFR' }, /type/],
    ['dns', { name: 'example.com', type: 'PTR' }, /body\.name/],
    ['tcp', { host: '-p', port: 80 }, /body\.host/],
    ['tcp', { host: '127.0.0.1', port: 70000 }, /port/],
    ['capture', { interface: 'lo', host: 'not host 1.2.3.4' }, /body\.host/],
    ['capture', { interface: 'lo', protocol: 'icmp', port: 22 }, /body\.port/],
    ['capture', { interface: 'lo', expression: 'tcp' }, /expression/],
    ['capture', { interface: '-w/etc/passwd' }, /body\.interface/],
    ['capture', { interface: 'lo', max_bytes: 1e9 }, /max_bytes/],
  ];
  for (const [path, payload, field] of refusals) {
    const response = await post(path, payload);
    assert.equal(response.statusCode, 400, `${path} ${JSON.stringify(payload)}: ${response.body}`);
    assert.match(JSON.parse(response.body).error, field, `${path} ${JSON.stringify(payload)}`);
  }
  const viewer = await headersWithPermissions(t.app, ['interfaces:read', 'logs:view'], t.headers);
  assert.equal((await post('ping', { host: '127.0.0.1' }, viewer)).statusCode, 403);
  const simulated = await post('ping', { host: '127.0.0.1' });
  assert.equal(simulated.statusCode, 503);
  assert.match(JSON.parse(simulated.body).error, /linux platform.*simulated/);
});

/** The events of a finished stream, in order. */
function eventsOf(body: string): { event: string; data: any }[] {
  return body.split('\n\n').filter((block) => /^event: /m.test(block)).map((block) => ({
    event: /^event: (.+)$/m.exec(block)![1],
    data: JSON.parse(block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')),
  }));
}

/** The uid a running program (found by an argument only this test uses) runs as, polled until it is there. */
async function uidOf(program: string, marker: string): Promise<number> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        if (!argv[0]?.endsWith(program) || !argv.includes(marker)) continue;
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        // tcpdump starts as root and drops after opening the device: wait for the drop, or the deadline.
        const uid = Number(/^Uid:\s+(\d+)/m.exec(status)![1]);
        if (uid !== 0 || program !== 'tcpdump') return uid;
      } catch {
        // the process ended between listing and reading
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${program} with ${marker} never ran unprivileged`);
}

const linuxSkip = systemSkip('the diagnostics on linux', { root: true, programs: ['ping', 'traceroute', 'dig', 'tcpdump'], users: ['nobody'] });

test('on linux: ping, traceroute, DNS, TCP and a capture really run against loopback, as nobody; the run limit answers 429', { skip: linuxSkip }, async () => {
  const t: AreaApp = await startAreaApp({ config: { platform: 'linux' } });
  after(() => t.close());
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const operator = await headersWithPermissions(t.app, ['interfaces:write'], t.headers);
  const open = (path: string, payload: object, headers = operator) =>
    fetch(`${base}/api/v1/diagnostics/${path}`, { method: 'POST', headers: { ...headers, ...SSE, 'content-type': 'application/json' }, body: JSON.stringify(payload) });

  // A loopback address no other test pings marks this run's processes.
  const marker = '127.83.41.7';
  const pinging = await open('ping', { host: marker, count: 3 });
  assert.equal(pinging.status, 200);
  assert.notEqual(await uidOf('ping', marker), 0, 'ping runs unprivileged');
  const ping = eventsOf(await pinging.text());
  assert.deepEqual(ping[0], { event: 'start', data: { command: ['ping', '-n', '-c', '3', '-W', '2', '--', marker] } });
  assert.ok(ping.some((e) => e.event === 'line' && /bytes from 127\.83\.41\.7/.test(e.data.text)), JSON.stringify(ping));
  assert.deepEqual(ping.at(-1), { event: 'exit', data: { exit_code: 0, timed_out: false, lines_dropped: 0 } });

  const trace = eventsOf(await (await open('traceroute', { host: '127.0.0.1', max_hops: 3 })).text());
  assert.ok(trace.some((e) => e.event === 'line' && /^\s*1\s+127\.0\.0\.1/.test(e.data.text)), JSON.stringify(trace));

  // DNS through a chosen server: a responder on loopback that answers NOERROR with no records.
  let asked = '';
  const dns = createSocket('udp4').on('message', (query, peer) => {
    asked = query.subarray(12).toString('latin1');
    const answer = Buffer.from(query);
    answer[2] = 0x81;
    answer[3] = 0x80;
    dns.send(answer, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => dns.bind(0, '127.0.0.1', resolve));
  after(() => dns.close());
  const dnsPort = (dns.address() as AddressInfo).port;
  const lookup = eventsOf(await (await open('dns', { name: 'diag-test.example', type: 'A', server: '127.0.0.1', port: dnsPort })).text());
  assert.deepEqual(lookup[0].data.command, ['dig', '-r', '@127.0.0.1', '-p', String(dnsPort), '+time=2', '+tries=2', '-q', 'diag-test.example', '-t', 'A']);
  assert.match(asked, /diag-test.*example/, 'the chosen server was asked');
  assert.ok(lookup.some((e) => e.event === 'line' && /status: NOERROR/.test(e.data.text)), JSON.stringify(lookup));
  assert.equal(lookup.at(-1)?.data.exit_code, 0);

  const listener = createTcpServer((socket) => socket.end()).listen(0, '127.0.0.1');
  await new Promise((resolve) => listener.once('listening', resolve));
  after(() => listener.close());
  const tcpPort = (listener.address() as AddressInfo).port;
  const tcp = eventsOf(await (await open('tcp', { host: '127.0.0.1', port: tcpPort })).text());
  assert.ok(tcp.some((e) => e.event === 'line' && /^open: connected/.test(e.data.text)), JSON.stringify(tcp));
  assert.deepEqual(tcp.at(-1)?.data, { open: true, timed_out: false, exit_code: 0 });

  // A capture of ICMP to the marker while a ping runs; at the same time a third run is one too many (429).
  const captureMarker = '127.83.41.9';
  const capturing = fetch(`${base}/api/v1/diagnostics/capture`, {
    method: 'POST', headers: { ...operator, 'content-type': 'application/json' },
    body: JSON.stringify({ interface: 'lo', protocol: 'icmp', host: captureMarker, duration_s: 4 }),
  });
  assert.notEqual(await uidOf('tcpdump', captureMarker), 0, 'tcpdump drops to nobody before reading packets');
  const pingDuring = await open('ping', { host: captureMarker, count: 2 });
  assert.equal(pingDuring.status, 200);
  const third = await open('tcp', { host: '127.0.0.1', port: tcpPort });
  assert.equal(third.status, 429, 'a third run of the same account while two run');
  assert.ok(Number(third.headers.get('retry-after')) >= 1);
  await pingDuring.text();
  const captured = await capturing;
  assert.equal(captured.status, 200);
  assert.equal(captured.headers.get('content-type'), 'application/vnd.tcpdump.pcap');
  assert.match(captured.headers.get('content-disposition') ?? '', /attachment; filename="capture-lo-.*\.pcap"/);
  const pcap = Buffer.from(await captured.arrayBuffer());
  assert.equal(pcap.readUInt32LE(0), 0xa1b2c3d4, 'a pcap global header');
  // Two echo requests and two replies, each 98 bytes on loopback's Ethernet framing, 16-byte record headers.
  assert.equal(captured.headers.get('x-capture-packets'), '4');
  assert.equal(pcap.length, 24 + 4 * (16 + 98));
  assert.equal(captured.headers.get('x-capture-ended-by'), 'duration');

  // The size cap: 1 KiB holds the header and two 562-byte ICMP packets at most, never a cut one.
  const capped = fetch(`${base}/api/v1/diagnostics/capture`, {
    method: 'POST', headers: { ...operator, 'content-type': 'application/json' },
    body: JSON.stringify({ interface: 'lo', protocol: 'icmp', host: captureMarker, duration_s: 10, max_bytes: 1024 }),
  });
  await uidOf('tcpdump', captureMarker);
  const { execFileSync } = await import('node:child_process');
  execFileSync('ping', ['-n', '-c', '4', '-i', '0.2', '-s', '520', captureMarker]);
  const cappedAnswer = await capped;
  assert.equal(cappedAnswer.headers.get('x-capture-ended-by'), 'size');
  const cappedPcap = Buffer.from(await cappedAnswer.arrayBuffer());
  assert.equal(cappedPcap.length, 24 + Number(cappedAnswer.headers.get('x-capture-packets')) * (16 + 562));
  assert.ok(cappedPcap.length <= 1024);

  // Every admitted run is in the audit trail, with who ran it and the arguments.
  const audit = JSON.parse((await t.request('GET', '/api/v1/logs?source=audit&limit=50')).body) as { action: string; actor: string; details: string }[];
  const runs = audit.filter((entry) => entry.action.startsWith('diagnostics.'));
  assert.ok(runs.some((entry) => entry.action === 'diagnostics.ping' && entry.details.includes(`-- ${marker}`)), JSON.stringify(runs));
  assert.ok(runs.some((entry) => entry.action === 'diagnostics.tcpdump' && entry.details.includes(`icmp and host ${captureMarker}`)));
  assert.equal(runs.length, 7, 'ping, traceroute, dns, tcp, capture, ping, capture: the refused third run is not one');
});

test('the run limit: 2 at a time and 20 starts a minute per account; a slot given back is free again; other accounts are not affected', () => {
  let now = 0;
  const limiter = new RunLimiter({ concurrent: 2, perWindow: 20, windowMs: 60_000 }, () => now);
  const status = (fn: () => unknown) => {
    try {
      fn();
      return 200;
    } catch (error) {
      return (error as { statusCode: number }).statusCode;
    }
  };
  const first = limiter.take('alice');
  limiter.take('alice');
  assert.equal(status(() => limiter.take('alice')), 429, 'a third at a time');
  assert.equal(status(() => limiter.take('bob')()), 200, 'another account');
  first();
  first(); // a second release of the same slot frees nothing more
  for (let started = 2; started < 20; started++) limiter.take('alice')();
  assert.equal(status(() => limiter.take('alice')), 429, 'the 21st start within the minute');
  now = 60_001;
  assert.equal(status(() => limiter.take('alice')), 200, 'a minute later');
});

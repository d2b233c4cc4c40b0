import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { outboundFetch, OutboundRefused } from '../src/net/outbound.js';
import { isSpecialAddress } from '../src/net/special-addresses.js';

test('special ranges are recognised in both families, including mapped IPv4', () => {
  for (const address of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '224.0.0.1']) {
    assert.equal(isSpecialAddress(address), true, address);
  }
  for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700::1111']) assert.equal(isSpecialAddress(address), false, address);
});

test('plain http and special addresses are refused before any connection', async () => {
  await assert.rejects(outboundFetch('http://example.org/'), OutboundRefused);
  await assert.rejects(outboundFetch('https://127.0.0.1/'), /blocked address/);
  await assert.rejects(outboundFetch('https://[::1]:8443/'), /blocked address/);
  await assert.rejects(outboundFetch('https://169.254.169.254/latest/meta-data'), /blocked address/);
});

test('a host name that resolves to a blocked address is refused at connect time', async () => {
  // "localhost" resolves to loopback: the check happens on the resolved address, not on the name.
  await assert.rejects(outboundFetch('http://localhost:65531/', {}, { allowHttp: true }), /resolves to .* blocked address/);
});

test('the admin allow-list admits a LAN destination, and cross-host redirects are refused', async () => {
  const server = createServer((request, response) => {
    if (request.url === '/hop') {
      response.writeHead(302, { location: '/final' }).end();
    } else if (request.url === '/away') {
      response.writeHead(302, { location: 'http://other.example:65531/' }).end();
    } else {
      response.end('ok');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  try {
    const policy = { allowHttp: true, allowList: ['127.0.0.0/8'] };
    const response = await outboundFetch(`http://127.0.0.1:${port}/hop`, {}, policy);
    assert.equal(await response.text(), 'ok');
    await assert.rejects(outboundFetch(`http://127.0.0.1:${port}/away`, {}, policy), /another host/);
    await assert.rejects(outboundFetch(`http://127.0.0.1:${port}/hop`, {}, { allowHttp: true }), /blocked address/);
  } finally {
    server.close();
  }
});

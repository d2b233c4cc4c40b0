import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { json } from '../helpers/app.js';
import { adminApi } from '../helpers/admin-api.js';

// Test endpoints send what is stored only where it is stored, through the outbound guard, and never let a
// field end a protocol header.

const api = adminApi();
const call = (method: string, url: string, payload?: unknown) => api.t.app.inject({ method: method as 'GET', url, payload: payload as object, headers: api.headers });


/** An SMTP server on loopback that records every AUTH attempt it sees. */
async function smtpServer(): Promise<{ port: number; logins: string[]; close(): void }> {
  const logins: string[] = [];
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS'], allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      logins.push(`${auth.username}:${auth.password}`);
      callback(null, { user: auth.username });
    },
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => callback());
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.server.address() as { port: number }).port, logins, close: () => server.close() };
}

test('SMTP test: the stored password never goes to a draft server; loopback needs an allow-list entry', async () => {
  const stored = await smtpServer();
  const other = await smtpServer();
  try {
    const config = { enabled: true, host: '127.0.0.1', port: stored.port, tls: 'none', username: 'mailer', password: 'stored-Secret-1', recipients: 'ops@example.org' };
    assert.equal((await call('PUT', '/api/v1/notify/smtp/config', config)).statusCode, 200);
    const blocked = await call('POST', '/api/v1/notify/smtp/test');
    assert.equal(blocked.statusCode, 400, blocked.body);
    assert.match(json(blocked).error, /blocked address/);
    assert.equal(stored.logins.length, 0, 'nothing was sent before the destination was allowed');

    assert.equal((await call('PUT', '/api/v1/notify/smtp/config', { allowed_addresses: ['127.0.0.1'] })).statusCode, 200);
    assert.equal((await call('POST', '/api/v1/notify/smtp/test')).statusCode, 200);
    assert.deepEqual(stored.logins, ['mailer:stored-Secret-1']);

    const draft = await call('POST', '/api/v1/notify/smtp/test', { host: '127.0.0.1', port: other.port, tls: 'none', username: 'mailer', recipients: 'ops@example.org' });
    assert.equal(draft.statusCode, 400, draft.body);
    assert.match(json(draft).error, /body\.password is required/);
    assert.deepEqual(other.logins, [], 'the draft server never saw the stored password');

    const own = await call('POST', '/api/v1/notify/smtp/test', { host: '127.0.0.1', port: other.port, tls: 'none', username: 'mailer', password: 'draft-pass', recipients: 'ops@example.org' });
    assert.equal(own.statusCode, 200, own.body);
    assert.deepEqual(other.logins, ['mailer:draft-pass']);
  } finally {
    stored.close();
    other.close();
  }
});

test('SMTP: CR, LF and NUL are refused in every header-like field', async () => {
  for (const body of [
    { from_address: 'fw@example.org\r\nBcc: x@evil.example' },
    { recipients: 'ops@example.org\nRCPT TO:<x@evil.example>' },
    { username: 'mailer\r\nAUTH PLAIN' },
    { host: 'mail.example.org\r\nQUIT' },
    { from_address: 'fw\u0000@example.org' },
  ]) {
    const response = await call('PUT', '/api/v1/notify/smtp/config', body);
    assert.equal(response.statusCode, 400, `${JSON.stringify(body)}: ${response.body}`);
    assert.match(json(response).error, /^body\./);
  }
});

/** A TCP listener on loopback collecting everything it receives. */
async function tcpSink(): Promise<{ port: number; received: () => string; close(): void }> {
  let data = '';
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('data', (chunk) => (data += chunk.toString()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    received: () => data,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

test('syslog test: no CR/LF reaches the wire, and loopback (where Redis listens) needs an allow-list entry', async () => {
  const sink = await tcpSink();
  try {
    for (const body of [{ hostname_override: 'fw\r\nSET pwned 1' }, { host: '127.0.0.1\r\nx' }]) {
      const stored = await call('PUT', '/api/v1/settings/syslog', body);
      assert.equal(stored.statusCode, 400, stored.body);
      const draft = await call('POST', '/api/v1/settings/syslog/test', { host: '127.0.0.1', port: sink.port, transport: 'tcp', ...body });
      assert.equal(draft.statusCode, 400, draft.body);
    }
    const blocked = await call('POST', '/api/v1/settings/syslog/test', { host: '127.0.0.1', port: sink.port, transport: 'tcp' });
    assert.equal(blocked.statusCode, 400, blocked.body);
    assert.match(json(blocked).error, /blocked address/);
    assert.equal(sink.received(), '');

    const sent = await call('POST', '/api/v1/settings/syslog/test', { host: '127.0.0.1', port: sink.port, transport: 'tcp', allowed_addresses: ['127.0.0.1/32'], hostname_override: 'fw-1' });
    assert.equal(sent.statusCode, 200, sent.body);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // RFC 6587 octet counting: `<length> <message>`, the length in bytes, and nothing after the one frame.
    const frame = /^(\d+) (.*)$/s.exec(sink.received());
    assert.ok(frame, `one octet-counted frame: ${JSON.stringify(sink.received())}`);
    assert.equal(Buffer.byteLength(frame[2]), Number(frame[1]), 'exactly one framed message');
    assert.match(frame[2], / fw-1 bulwark\[\d+\]: Bulwark syslog test message$/);
  } finally {
    sink.close();
  }
});

test('AI provider test: the stored key never goes to a draft endpoint on another server', async () => {
  const sink = await tcpSink();
  try {
    const saved = await call('PUT', '/api/v1/settings/ai', { provider: 'openai', api_key: 'sk-stored-key', endpoint: 'https://api.openai.example/v1', model: 'gpt-test', outbound_allow_list: ['127.0.0.1'] });
    assert.equal(saved.statusCode, 200, saved.body);
    const draft = await call('POST', '/api/v1/settings/ai/test', { provider: 'openai', endpoint: `http://127.0.0.1:${sink.port}/v1` });
    assert.equal(draft.statusCode, 400, draft.body);
    assert.match(json(draft).error, /body\.api_key is required/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(!sink.received().includes('sk-stored-key'), 'the key never left');
    assert.equal(sink.received(), '');
  } finally {
    sink.close();
  }
});

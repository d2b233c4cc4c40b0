import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.js';
import { loadStartupConfig } from '../src/config.js';
import { adminBearer, fmt, throughput } from './harness.js';

/**
 * HTTPS against plain HTTP on the same app in the same run (issue 37): authenticated reads (`GET /auth/me`
 * with a Bearer token, `GET /rules?limit=100`) over 8 keep-alive connections, and the same read with a new
 * connection per request (for HTTPS: one TLS handshake each, the local CA's ECDSA P-256 certificate, TLS 1.3).
 * The load comes from a child process; the CPU figure is the server's per request.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'bulwark-bench-https-'));
const app = await buildApp({ config: { ...loadStartupConfig([], {}), dataDir, logLevel: 'silent', tlsListen: { host: '127.0.0.1', port: 0 } }, logger: false });
const http = await app.listen({ host: '127.0.0.1', port: 0 });
const https = `https://127.0.0.1:${(app.secureServer!.address() as AddressInfo).port}`;
const headers = await adminBearer(http);
const ca = await (await fetch(`${http}/api/v1/ca/cert.pem`, { headers })).text();
for (let i = 0; i < 100; i++) {
  await fetch(`${http}/api/v1/rules`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ action: 'pass', direction: 'in', protocol: 'tcp', dst_port_start: 1000 + i }) });
}

const cases = [
  { name: 'GET /auth/me, keep-alive', path: '/api/v1/auth/me', newConnectionEach: false },
  { name: 'GET /rules?limit=100, keep-alive', path: '/api/v1/rules?limit=100', newConnectionEach: false },
  { name: 'GET /auth/me, new connection each', path: '/api/v1/auth/me', newConnectionEach: true },
];
for (const { name, path, newConnectionEach } of cases) {
  // warm both listeners, then measure them one after the other
  await throughput({ origin: http, path, headers, durationMs: 500, newConnectionEach });
  await throughput({ origin: https, path, headers, ca, durationMs: 500, newConnectionEach });
  const plain = await throughput({ origin: http, path, headers, durationMs: 3000, newConnectionEach });
  const secure = await throughput({ origin: https, path, headers, ca, durationMs: 3000, newConnectionEach });
  console.log(`${name.padEnd(38)} HTTP ${fmt(plain.perSecond, 0).padStart(6)}/s (${fmt(plain.cpuMicrosPerRequest, 0)} µs CPU each)   HTTPS ${fmt(secure.perSecond, 0).padStart(6)}/s (${fmt(secure.cpuMicrosPerRequest, 0)} µs CPU each)   HTTPS/HTTP ${fmt(secure.perSecond / plain.perSecond, 2)}`);
}
await app.close();
rmSync(dataDir, { recursive: true, force: true });

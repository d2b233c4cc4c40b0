import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startServer, load, percentile, fmt } from './harness.js';

/**
 * Logins per second, and the p99 latency of GET /auth/me while a login flood runs. Baseline: the same
 * GET /auth/me latency with no flood, measured in the same run.
 */
const server = await startServer();
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const credentials = { username: 'admin', password: 'Bench-password1' };
await post('/api/v1/auth/register', credentials);
const { access_token } = (await (await post('/api/v1/auth/login', credentials)).json()) as { access_token: string };
await post('/api/v1/auth/settings', {}); // warm
// the flood comes from one address; lift the lockout threshold so every login really hashes
await fetch(`${server.url}/api/v1/auth/settings`, { method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` }, body: JSON.stringify({ max_login_attempts: 1000 }) });

const me = async () => {
  const response = await fetch(`${server.url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${access_token}` } });
  if (response.status !== 200) throw new Error(`me: ${response.status}`);
  await response.arrayBuffer();
};
const login = async () => {
  const response = await post('/api/v1/auth/login', credentials);
  if (response.status !== 200) throw new Error(`login: ${response.status}`);
  await response.arrayBuffer();
};

const baseline = await load(me, 4, 3000);
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
const [logins, meDuringFlood] = await Promise.all([load(login, 8, 5000), load(me, 4, 5000)]);
delay.disable();

console.log(`logins per second (8 concurrent clients): ${fmt(logins.length / 5)}   login p50 ${fmt(percentile(logins, 50))} ms, p99 ${fmt(percentile(logins, 99))} ms`);
console.log(`GET /auth/me p99 during the login flood:   ${fmt(percentile(meDuringFlood, 99), 2)} ms (p50 ${fmt(percentile(meDuringFlood, 50), 2)} ms, ${meDuringFlood.length} calls)`);
console.log(`GET /auth/me p99 baseline, no flood:       ${fmt(percentile(baseline, 99), 2)} ms (p50 ${fmt(percentile(baseline, 50), 2)} ms, ${baseline.length} calls)`);
console.log(`event-loop delay during the flood: p99 ${fmt(delay.percentile(99) / 1e6, 2)} ms, max ${fmt(delay.max / 1e6, 2)} ms`);
await server.stop();

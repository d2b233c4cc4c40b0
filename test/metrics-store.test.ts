import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { systemSkip } from './helpers/system-skip.js';
import { flow, replayPlatform, ReplayTraffic } from './helpers/traffic.js';
import { dashboardAreas, dashboardOf } from './helpers/areas.js';

const REDIS = { host: '127.0.0.1', port: 6379 };

/** Does a Redis-protocol server answer on 127.0.0.1:6379? Mandatory under REQUIRE_SYSTEM_TESTS=1. */
async function redisSkipReason(): Promise<string | false> {
  const answers = await new Promise<boolean>((resolve) => {
    const socket = connect(REDIS.port, REDIS.host);
    socket.setTimeout(1000, () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => (socket.end(), resolve(data.toString().startsWith('+PONG'))));
  });
  return systemSkip('the metrics-store test', { also: [['a Redis-protocol server answering on 127.0.0.1:6379', answers]] });
}

test('metrics store: batches land in Redis with retention, and series and the history batch are served from it across restarts', { skip: await redisSkipReason() }, async () => {
  const prefix = `bulwark-test:${randomBytes(6).toString('hex')}:`;
  const redis = new Redis(REDIS);
  try {
    const area = dashboardAreas({ manualTicks: true, metricsKeyPrefix: prefix });
    const traffic = new ReplayTraffic();
    traffic.set([flow(1, 10)], 42);
    const first = await startAreaApp({ areas: area, platform: replayPlatform(traffic) });
    const clock = first.clock;
    let restarted: AreaApp | null = null;
    try {
      const admin = first.headers;
      const enabled = await first.app.inject({ method: 'PUT', url: '/api/v1/settings/metrics-store', headers: admin, payload: { enabled: true, url: 'redis://127.0.0.1:6379', retention_minutes: 2 } });
      assert.equal(enabled.statusCode, 200, enabled.body);
      assert.equal(enabled.json().status, 'connected');
      const service = dashboardOf(first.app);
      for (let i = 0; i < 10; i++) {
        clock.advance(1000);
        await service.broadcaster.poll();
      }
      await service.flushExternal();
      const key = `${prefix}second:pf.states`;
      const members = await redis.zrange(key, 0, -1);
      assert.equal(members.length, 9, 'nine closed one-second points written in one batch (the tenth bucket is still open)');
      assert.ok(members.every((m) => m.split('|')[1] === '42'));
      assert.ok((await redis.ttl(key)) > 0, 'keys expire');
      assert.ok((await redis.smembers(`${prefix}series`)).includes('traffic.bps_in'));

      // retention: 2 minutes later the old seconds are trimmed on the next batch
      for (let i = 0; i < 150; i++) {
        clock.advance(1000);
        await service.broadcaster.poll();
      }
      await service.flushExternal();
      const oldest = Number((await redis.zrange(key, 0, 0))[0].split('|')[0]);
      assert.ok(oldest >= Math.floor(clock.now() / 1000) - 120, 'nothing older than retention_minutes');
      const response = await first.app.inject({ url: '/api/v1/metrics/series?name=pf.states&range_secs=100', headers: admin });
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(response.json().series[0].source, 'metrics-store');
    } finally {
      await first.close();
    }

    // a fresh data directory: nothing in SQLite; history comes from Redis only
    const area2 = dashboardAreas({ manualTicks: true, metricsKeyPrefix: prefix });
    restarted = await startAreaApp({ clock, areas: area2, platform: replayPlatform(new ReplayTraffic()) });
    try {
      const admin = restarted.headers;
      const put = await restarted.app.inject({ method: 'PUT', url: '/api/v1/settings/metrics-store', headers: admin, payload: { enabled: true, retention_minutes: 2 } });
      assert.equal(put.json().status, 'connected');
      const series = (await restarted.app.inject({ url: '/api/v1/metrics/series?name=pf.states&range_secs=100', headers: admin })).json();
      assert.equal(series.series[0].source, 'metrics-store');
      assert.ok(series.points.length >= 95, `${series.points.length} points served from Redis after a restart`);
      assert.ok(series.points.every((p: { v: number }) => p.v === 42));
      const list = (await restarted.app.inject({ url: '/api/v1/metrics/list', headers: admin })).json().names;
      assert.ok(list.includes('pf.states'));

      const base = (await restarted.app.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws');
      const ticket = (await restarted.app.inject({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: admin })).json().ticket;
      const history = await new Promise<any>((resolve, reject) => {
        const ws = new WebSocket(`${base}/api/v1/ws?ticket=${ticket}`);
        ws.once('message', (data) => (ws.close(), resolve(JSON.parse(data.toString()))));
        ws.once('error', reject);
      });
      assert.equal(history.type, 'history');
      assert.ok(history.data.length >= 95, 'the history batch is rebuilt from the store');
      assert.equal(history.data.at(-1).status.pf_states, 42);

      const wrong = await restarted.app.inject({ method: 'PUT', url: '/api/v1/settings/metrics-store', headers: admin, payload: { url: 'redis://127.0.0.1:1' } });
      assert.equal(wrong.json().status, 'disconnected');
      await dashboardOf(restarted.app).broadcaster.poll(); // a local sample, so the series exists in memory
      const fallback = (await restarted.app.inject({ url: '/api/v1/metrics/series?name=pf.states&range_secs=100', headers: admin })).json();
      assert.equal(fallback.series[0].source, 'memory', 'an unreachable store falls back to memory');
    } finally {
      await restarted.close();
    }
  } finally {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import spectralCore from '@stoplight/spectral-core';
import spectralRulesets from '@stoplight/spectral-rulesets';
import { startTestApp } from './helpers/app.js';

const { Spectral } = spectralCore;
const { oas } = spectralRulesets;

/**
 * Warnings we keep on purpose, each with its reason. Anything else the `spectral:oas` ruleset reports fails the
 * test, so the document stays clean as routes are added.
 */
const ACCEPTED_WARNINGS: { code: string; path?: string; reason: string }[] = [
  { code: 'info-contact', reason: 'an appliance has no public contact to name' },
  // The handshake answers 101 and a plain GET 426: a 2xx would be a lie.
  { code: 'operation-success-response', path: 'paths./api/v1/ws.get.responses', reason: 'WebSocket upgrade' },
  { code: 'operation-success-response', path: 'paths./ws.get.responses', reason: 'WebSocket upgrade' },
];

test('the OpenAPI document passes the spectral:oas ruleset with no error and only the accepted warnings', async () => {
  const t = await startTestApp();
  try {
    const response = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(response.statusCode, 200);
    const spectral = new Spectral();
    spectral.setRuleset({ extends: [[oas as never, 'recommended']] });
    const results = await spectral.run(response.body);
    const describe = (r: (typeof results)[number]) => `${r.code} at ${r.path.join('.')}: ${r.message}`;
    const errors = results.filter((r) => r.severity === 0).map(describe);
    assert.deepEqual(errors, [], 'spectral:oas errors');
    const unexpected = results
      .filter((r) => r.severity > 0)
      .filter((r) => !ACCEPTED_WARNINGS.some((w) => w.code === r.code && (w.path === undefined || w.path === r.path.join('.'))))
      .map(describe);
    assert.deepEqual(unexpected, [], 'spectral:oas warnings beyond the accepted ones');
    const operations = Object.values(JSON.parse(response.body).paths as Record<string, object>).flatMap((item) => Object.keys(item));
    assert.ok(operations.length > 400, `the linted document holds the API (${operations.length} operations)`);
  } finally {
    await t.close();
  }
});

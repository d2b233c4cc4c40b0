/**
 * The appliance's fleet routes (issue 35) without a controller: what POST /api/v1/fleet/enrol refuses before it
 * dials anything, and what GET /api/v1/fleet/agent shows of an appliance that never enrolled.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, json } from './helpers/app.js';
import { adminHeaders, headersWithPermissions } from './helpers/auth.js';
import { FLEET_AGENT_PERMISSIONS } from '../src/core/permissions.js';
import { builtinRoleId } from '../src/auth/roles.js';
import { FLEET_AGENT_ACCOUNT } from '../src/auth/service-account.js';
import { SYSTEM_PROVIDER } from '../src/auth/users.js';

const TOKEN = `bwf1.${'a'.repeat(16)}.${'b'.repeat(64)}.${'c'.repeat(64)}`;

test('fleet routes: enrolment input refused with the field named, permissions enforced, an unenrolled agent shown as such', async () => {
  const t = await startTestApp();
  try {
    const admin = await adminHeaders(t.app);
    const enrol = (payload: unknown, headers = admin) => t.app.inject({ method: 'POST', url: '/api/v1/fleet/enrol', headers, payload: payload as object });
    for (const [controller_url, why] of [['ftp://controller', /https:\/\/host/], ['https://user:pw@controller', /no path, query or credentials/], ['https://controller/x', /no path/], ['not a url', /not a URL/]] as const) {
      const refused = await enrol({ controller_url, token: TOKEN });
      assert.equal(refused.statusCode, 400, controller_url);
      assert.match(json(refused).error, /^body\.controller_url: /);
      assert.match(json(refused).error, why);
    }
    for (const token of ['bwf1.short', `${TOKEN}.extra`, TOKEN.replace('bwf1', 'bwf2'), `bwf1.${'g'.repeat(16)}.${'b'.repeat(64)}.${'c'.repeat(64)}`]) {
      const refused = await enrol({ controller_url: 'https://controller.example:8443', token });
      assert.equal(refused.statusCode, 400, token);
      assert.match(json(refused).error, /^body\.token: not a Bulwark enrolment token/);
    }
    // The outbound guard: a loopback controller is refused until the allow-list names it; nothing is enrolled.
    const guarded = await enrol({ controller_url: 'https://127.0.0.1:9', token: TOKEN });
    assert.equal(guarded.statusCode, 400);
    assert.match(json(guarded).error, /outbound request refused: 127\.0\.0\.1 .*allowed_addresses/);
    const viewer = await headersWithPermissions(t.app, ['settings:read'], admin);
    assert.equal((await enrol({ controller_url: 'https://controller.example', token: TOKEN }, viewer)).statusCode, 403);
    const agent = await t.app.inject({ method: 'GET', url: '/api/v1/fleet/agent', headers: viewer });
    assert.equal(agent.statusCode, 200);
    assert.deepEqual({ enrolled: json(agent).enrolled, connected: json(agent).connected, attempts: json(agent).attempts }, { enrolled: false, connected: false, attempts: [] });
    assert.equal(t.app.context.identity.apiKeys.list().some((key) => key.name === 'fleet-agent'), false, 'no credential made for a refused enrolment');
  } finally {
    await t.close();
  }
});

test('the agent key after an enrolment at start: its locked owner holds the fleet-agent role (settings sections work), an older operator-role owner is moved to it, and no person may be given that role', async () => {
  const t = await startTestApp();
  try {
    const admin = await adminHeaders(t.app);
    const identity = t.app.context.identity;
    // As an older release left it: the locked owner with the operator role, which lacks settings:write.
    identity.users.insert({ username: FLEET_AGENT_ACCOUNT, passwordHash: null, roleId: builtinRoleId('operator'), authProvider: SYSTEM_PROVIDER });
    const ownerId = identity.fleetAgentOwner();
    assert.equal(identity.users.byId(ownerId)?.role_id, builtinRoleId('fleet-agent'));
    const { key } = identity.apiKeys.create({ name: 'fleet-agent', permissions: [...FLEET_AGENT_PERMISSIONS], ownerId, createdBy: 'enrolment at start', expiresAt: null });
    const agent = { authorization: `ApiKey ${key}` };
    // Time sources and remote syslog are template sections: the key must reach settings:write routes.
    const allowed = await t.app.inject({ method: 'PUT', url: '/api/v1/settings/outbound', headers: agent, payload: { allowed_addresses: ['127.0.0.1/32'] } });
    assert.equal(allowed.statusCode, 200, allowed.body);
    // ...and nothing beyond its list (users are not a template section).
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/v1/auth/users', headers: agent })).statusCode, 403);
    const person = await t.app.inject({ method: 'POST', url: '/api/v1/auth/users', headers: admin, payload: { username: 'fleet-person', password: 'Fleet-person-1', role: 'fleet-agent' } });
    assert.equal(person.statusCode, 400);
    assert.match(json(person).error, /^body\.role: the fleet-agent role cannot be assigned to a person/);
  } finally {
    await t.close();
  }
});

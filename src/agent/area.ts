import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Area } from '../areas/area.js';
import type { AppContext } from '../context.js';
import { BUILD } from '../core/build-info.js';
import { conflict } from '../core/errors.js';
import { FLEET_AGENT_PERMISSIONS, type Permission } from '../core/permissions.js';
import { requireIdentity } from '../http/access.js';
import { route } from '../http/route.js';
import { ErrorAnswer } from '../http/documented-responses.js';
import { adminAllowList } from '../net/admin-allow-list.js';
import { FleetAgent } from './agent.js';
import { ApplianceApplier } from './appliance-applier.js';
import { enrolWithController, type EnrolledIdentity } from './enrol.js';
import { StartupEnroller } from './startup-enrol.js';
import { FileStateStore } from './state.js';

/** The agent's own API key on this appliance; its permissions are FLEET_AGENT_PERMISSIONS (what a revision needs). */
const AGENT_KEY_NAME = 'fleet-agent';

const EnrolBody = Type.Object({
  controller_url: Type.String({ maxLength: 300, description: 'https://host[:port] of the fleet controller' }),
  token: Type.String({ maxLength: 300, description: 'the enrolment token the controller issued (single use)' }),
}, { additionalProperties: false });

const EnrolAnswer = Type.Object({ enrolled: Type.Boolean(), appliance_id: Type.String(), controller_url: Type.String() });
const AgentStatus = Type.Object({
  enrolled: Type.Boolean(),
  controller_url: Type.Union([Type.String(), Type.Null()]),
  appliance_id: Type.Union([Type.String(), Type.Null()]),
  connected: Type.Boolean(),
  revoked: Type.Boolean({ description: 'the controller revoked this appliance: the agent no longer connects' }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  applied_revision: Type.Integer({ description: 'the last revision applied (0: none)' }),
  attempts: Type.Array(Type.Object({
    revision: Type.Integer(),
    outcome: Type.Union([Type.Literal('applying'), Type.Literal('applied'), Type.Literal('failed')]),
    reason: Type.Union([Type.String(), Type.Null()]),
    at: Type.String(),
  }), { description: 'every revision number attempted (the last 50), each at most once' }),
});

/**
 * The appliance's side of the fleet (docs/fleet.md): enrolment with a controller, and the agent that keeps the
 * outbound connection and applies revisions through this appliance's own API.
 */
export function createFleetAgentArea(context: AppContext): Area & { agent: () => FleetAgent | null } {
  const store = new FileStateStore(join(context.config.dataDir, 'fleet-agent.json'), context.sealer);
  let agent: FleetAgent | null = null;
  let server: FastifyInstance | null = null;
  let startupEnroller: StartupEnroller | null = null;
  const make = (app: FastifyInstance) =>
    new FleetAgent(store, new ApplianceApplier(app, () => store.load()?.applier_secret), {
      version: BUILD.version,
      allowList: () => adminAllowList(context.store),
      log: context.log,
      statusIntervalMs: Number(process.env.BULWARK_FLEET_STATUS_INTERVAL_MS ?? 30_000),
    });
  /** Keeps the new identity with a fresh agent key, and starts the agent on it. */
  const begin = async (enrolled: EnrolledIdentity, owner: { ownerId: string; createdBy: string; permissions: Permission[] }) => {
    const existing = context.identity.apiKeys.list().find((key) => key.name === AGENT_KEY_NAME);
    if (existing) context.identity.apiKeys.remove(existing.id);
    const { key } = context.identity.apiKeys.create({ name: AGENT_KEY_NAME, permissions: owner.permissions, ownerId: owner.ownerId, createdBy: owner.createdBy, expiresAt: null });
    await agent?.stop();
    store.save({ ...enrolled, attempts: {}, applied_revision: 0, applied_document: null, applier_secret: key });
    agent = make(server!);
    agent.start();
  };
  return {
    name: 'fleet-agent',
    agent: () => agent,
    routes: [
      route({
        method: 'POST', path: '/api/v1/fleet/enrol', access: 'settings:write', tags: ['Fleet'],
        schema: { body: EnrolBody, response: { 200: EnrolAnswer, 502: ErrorAnswer('The controller could not be reached, or presented a CA other than the one the token pins') } },
        summary: 'Enrols this appliance with a fleet controller: proves the token, receives a client certificate, keeps one outbound connection',
        handler: async (request) => {
          if (!agent || !server) throw conflict('the fleet agent is not running yet; try again once the appliance has started');
          const status = agent.status();
          if (status.enrolled && !status.revoked) throw conflict(`this appliance is already enrolled with ${status.controller_url} as ${status.appliance_id}`);
          const identity = requireIdentity(request);
          const enrolled = await enrolWithController({ controllerUrl: request.body.controller_url, token: request.body.token, allowList: adminAllowList(context.store) });
          startupEnroller?.stop();
          // The agent's credential: the agent permissions the enrolling administrator holds, nothing beyond them.
          await begin(enrolled, { ownerId: identity.userId, createdBy: identity.username, permissions: FLEET_AGENT_PERMISSIONS.filter((p) => identity.permissions.has(p)) });
          return { enrolled: true, appliance_id: enrolled.appliance_id, controller_url: enrolled.controller_url };
        },
      }),
      route({
        method: 'GET', path: '/api/v1/fleet/agent', access: 'settings:read', tags: ['Fleet'], schema: { response: { 200: AgentStatus } },
        summary: "The fleet agent: enrolment, connection, and every revision it attempted with its outcome",
        handler: async () => {
          if (agent) return { ...agent.status(), ...(startupEnroller?.lastError && !store.load() ? { last_error: startupEnroller.lastError } : {}) };
          const state = store.load();
          return { enrolled: state !== null, controller_url: state?.controller_url ?? null, appliance_id: state?.appliance_id ?? null, connected: false, revoked: false, last_error: null, applied_revision: state?.applied_revision ?? 0, attempts: [] };
        },
      }),
    ],
    start(app) {
      server = app;
      agent = make(app);
      agent.start();
      const wanted = context.config.fleetEnrol;
      if (wanted && !store.load()) {
        // Enrolled at start, with no person signed in: the key belongs to a locked account of the operator role.
        startupEnroller = new StartupEnroller(wanted, () => adminAllowList(context.store), (enrolled) => {
          begin(enrolled, { ownerId: context.identity.fleetAgentOwner(), createdBy: 'enrolment at start', permissions: [...FLEET_AGENT_PERMISSIONS] })
            .catch((error: unknown) => context.log.warn({ err: error }, 'fleet: the enrolment at start could not be kept'));
        }, context.log);
        startupEnroller.start();
      }
    },
    async stop() {
      startupEnroller?.stop();
      await agent?.stop();
    },
  };
}

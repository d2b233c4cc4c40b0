import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { loadOrCreateKeyFile, Sealer } from '../core/crypto.js';
import { installErrorHandling } from '../http/error-handler.js';
import { MethodIndex } from '../http/method-index.js';
import { validatorCompiler } from '../http/validation.js';
import { AGENT_PATHS } from '../agent/protocol.js';
import { Accounts } from './accounts.js';
import { AgentHub } from './agent-hub.js';
import { issueServerCertificate, loadOrCreateAuthority, type CaMaterial } from './authority.js';
import { CHANNELS } from './channels.js';
import type { ControllerConfig } from './config.js';
import { openPool, type Pool } from './database.js';
import { Enrolment } from './enrolment.js';
import { NotificationListener } from './listener.js';
import { migrate } from './migrations.js';
import { ProcessRegistry } from './process-registry.js';
import { Rollouts } from './rollouts.js';
import { registerControllerRoutes } from './routes.js';
import { Templates } from './templates.js';
import { FleetViews } from './views.js';

export interface Controller {
  app: FastifyInstance;
  pool: Pool;
  ca: CaMaterial;
  accounts: Accounts;
  enrolment: Enrolment;
  templates: Templates;
  rollouts: Rollouts;
  views: FleetViews;
  hub: AgentHub;
}

/** How often each controller process advances running rollouts on its own (wave intervals, lost notifications). */
const TICK_MS = 1000;

/**
 * A controller process: migrations, the CA, then one HTTPS listener for both the API (bearer tokens) and the
 * agents (client certificates, asked for on every connection and required on the agent path).
 */
export async function buildController(config: ControllerConfig): Promise<Controller> {
  const pool = openPool(config.database);
  await migrate(pool);
  const ca = await loadOrCreateAuthority(pool, new Sealer(loadOrCreateKeyFile(config.keyFile)));
  const server = await issueServerCertificate(ca, config.names);
  const app = Fastify({
    https: { key: server.private_key_pem, cert: server.certificate_pem, ca: ca.certificate_pem, requestCert: true, rejectUnauthorized: false },
    logger: { level: config.logLevel, redact: { paths: ['req.headers.authorization', '*.password', '*.token'], censor: '[redacted]' } },
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 16 * 1024 * 1024,
  });
  app.setValidatorCompiler(validatorCompiler);
  const methods = new MethodIndex();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') methods.remember(method, route.url);
  });
  installErrorHandling(app, methods);

  const rollouts = new Rollouts(pool);
  const hub = new AgentHub(pool, rollouts, app.log);
  const controller: Controller = {
    app, pool, ca, rollouts, hub,
    accounts: new Accounts(pool), enrolment: new Enrolment(pool, ca), templates: new Templates(pool), views: new FleetViews(pool),
  };
  registerControllerRoutes(app, controller);

  app.server.on('upgrade', (request, socket, head) => {
    hub.upgrade(request, socket, head).catch((error: unknown) => {
      app.log.warn({ err: error }, `fleet: ${AGENT_PATHS.connect} upgrade failed`);
      socket.destroy();
    });
  });

  const listener = new NotificationListener(config.database, (channel, payload) => {
    const work = channel === CHANNELS.nudge
      ? (async () => {
          hub.nudge(await rollouts.applianceIdsToNudge(JSON.parse(payload) as { rollout?: string; wave?: number; rolled_back?: boolean; appliance?: string }));
        })()
      : channel === CHANNELS.revoke
        ? Promise.resolve(hub.revoke(payload))
        : rollouts.advance(payload);
    work.catch((error: unknown) => app.log.warn({ err: error, channel }, 'fleet: a notification could not be handled'));
  }, app.log);
  await listener.start();
  // Registered (and the dead processes' leftovers cleared) before the listener accepts any agent.
  const registry = new ProcessRegistry(pool, hub.instance, app.log);
  await registry.start();
  let ticking = false;
  const tick = setInterval(() => {
    if (ticking) return;
    ticking = true;
    rollouts.advanceAll().catch((error: unknown) => app.log.warn({ err: error }, 'fleet: advancing rollouts failed')).finally(() => (ticking = false));
  }, TICK_MS);
  app.addHook('preClose', async () => {
    clearInterval(tick);
    hub.closeAll();
    await registry.stop();
    await listener.stop();
  });
  app.addHook('onClose', async () => {
    await pool.end();
  });
  return controller;
}

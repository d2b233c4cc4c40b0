import { buildApp } from './app.js';
import { loadStartupConfig, StartupError } from './config.js';
import { trustedProxiesFromSettings } from './areas/settings/startup.js';
import { restorePendingDatabase, writeReadyMarker } from './areas/updates/activation-files.js';
import { BUILD } from './core/build-info.js';
import { runtimeAccessProblems, runtimeRoot } from './platform/daemon-runtime.js';
import { prepareRuntimeRoot } from './platform/runtime-access.js';

/** Flags and environment → configuration → store → app → listen; graceful shutdown on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config;
  try {
    config = loadStartupConfig(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof StartupError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`bulwark: ${(error as Error).message}\n`);
      process.exit(2);
    }
    throw error;
  }
  // The daemons' runtime tree: created (root-owned, traversable) before anything renders into it; an unsafe
  // folder on the way is a start-up error, not a 409 at the first apply.
  if (config.platform !== 'simulated' && process.getuid?.() === 0) {
    try {
      prepareRuntimeRoot(runtimeRoot(config));
    } catch (error) {
      process.stderr.write(`bulwark: ${(error as Error).message}\n`);
      process.exit(2);
    }
  }
  // Trusted proxies saved in the api_server settings apply from this (re)start unless a flag or variable sets them.
  if (config.trustedProxies.length === 0) config = { ...config, trustedProxies: trustedProxiesFromSettings(config.dataDir) };
  // An automatic rollback of a self-update asks for the database as it was before the switch (docs/updates.md).
  const restored = restorePendingDatabase(config.dataDir, BUILD.version);
  const app = await buildApp({ config });
  if (restored) app.log.warn(restored);
  const address = await app.listen({ host: config.host, port: config.port });
  app.log.info({ url: address, platform: config.platform, dataDir: config.dataDir, version: BUILD.version }, `Bulwark listening on ${address}`);
  for (const problem of runtimeAccessProblems(config, app.context.platform.simulated)) {
    app.log.warn(problem, `${problem.daemon} (user ${problem.user}) cannot use ${problem.path}: ${problem.missing} permission missing; its applies will answer 409 (GET /api/v1/status lists this)`);
  }
  // What the activation helper of a self-update waits for: this version serves.
  writeReadyMarker(config.dataDir, BUILD.version);
  if (app.context.identity.awaitingFirstAccount()) {
    app.log.warn(`No account exists yet: the first POST ${address}/api/v1/auth/register claims this appliance as its administrator. Register now, or listen on loopback only until you do.`);
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    const force = setTimeout(() => {
      app.log.error('shutdown took longer than 5 s; exiting');
      process.exit(1);
    }, 5000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`bulwark: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});

import { controllerConfigFrom, ControllerConfigError } from './config.js';
import { buildController } from './server.js';

/** The fleet controller: environment → PostgreSQL (migrated) → HTTPS listener; graceful stop on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  let config;
  try {
    config = controllerConfigFrom(process.env);
  } catch (error) {
    if (!(error instanceof ControllerConfigError)) throw error;
    process.stderr.write(`bulwark-controller: ${error.message}\n`);
    process.exit(2);
  }
  const controller = await buildController(config);
  const address = await controller.app.listen({ host: config.host, port: config.port });
  controller.app.log.info({ url: address, names: config.names }, `Bulwark controller listening on ${address}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    controller.app.log.info({ signal }, 'controller shutting down');
    setTimeout(() => process.exit(1), 5000).unref();
    controller.app.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`bulwark-controller: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});

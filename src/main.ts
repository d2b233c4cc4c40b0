import { buildApp } from './app.js';
import { loadStartupConfig, StartupError } from './config.js';

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
  const app = await buildApp({ config });
  const address = await app.listen({ host: config.host, port: config.port });
  app.log.info({ url: address, platform: config.platform, dataDir: config.dataDir }, `Bulwark listening on ${address}`);

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

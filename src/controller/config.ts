import { resolve } from 'node:path';

export interface ControllerConfig {
  /** PostgreSQL connection string (BULWARK_CONTROLLER_DB). */
  database: string;
  host: string;
  port: number;
  /** Names and addresses agents dial this controller by: the TLS server certificate's subject alternative names. */
  names: string[];
  /** The key that seals the CA's private key in the database; the same file for every controller process. */
  keyFile: string;
  logLevel: string;
}

export class ControllerConfigError extends Error {}

export function controllerConfigFrom(env: NodeJS.ProcessEnv): ControllerConfig {
  const database = env.BULWARK_CONTROLLER_DB;
  if (!database) throw new ControllerConfigError('BULWARK_CONTROLLER_DB is not set: give a PostgreSQL connection string (postgres://user@host:5432/database)');
  const listen = env.BULWARK_CONTROLLER_LISTEN ?? '0.0.0.0:8443';
  const match = /^(.*):(\d{1,5})$/.exec(listen);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) throw new ControllerConfigError(`BULWARK_CONTROLLER_LISTEN: "${listen}" is not host:port`);
  const names = (env.BULWARK_CONTROLLER_NAMES ?? 'localhost,127.0.0.1').split(',').map((n) => n.trim()).filter(Boolean);
  if (names.length === 0) throw new ControllerConfigError('BULWARK_CONTROLLER_NAMES: name at least one host name or address agents dial');
  return {
    database, host: match[1].replace(/^\[|\]$/g, ''), port, names,
    keyFile: resolve(env.BULWARK_CONTROLLER_KEY_FILE ?? './controller-secrets.key'),
    logLevel: env.BULWARK_LOG_LEVEL ?? 'info',
  };
}

import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { ReverseProxyControl } from '../reverse-proxy.js';

/** A reverse proxy that runs in memory: control changes its state and writes server-log lines. */
export function createSimulatedReverseProxy(now: () => number = Date.now): ReverseProxyControl {
  let running = false;
  const serverLog: string[] = [];
  const log = (message: string) => {
    serverLog.push(`${new Date(now()).toISOString()} level=info msg="${message}" (simulated)`);
    return message;
  };
  const checkConfig = (file: string): string | null => {
    try {
      const parsed = parse(readFileSync(file, 'utf8')) as unknown;
      if (parsed !== null && typeof parsed !== 'object') return 'configuration is not a YAML mapping';
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  };
  return {
    dialect: 'model-yaml',
    async status() {
      return { running, version: 'simulated' };
    },
    async start() {
      running = true;
      return log('reverse proxy started');
    },
    async stop() {
      running = false;
      return log('reverse proxy stopped');
    },
    async restart() {
      running = true;
      return log('reverse proxy restarted');
    },
    async validate(file) {
      return checkConfig(file);
    },
    async apply(install, enabled) {
      const problem = checkConfig(install.configFile);
      if (problem) throw new Error(problem);
      running = enabled;
      return log(enabled ? 'configuration applied, service restarted' : 'configuration saved, service stopped');
    },
    async logs(kind, lines) {
      return kind === 'server' ? serverLog.slice(-lines) : [];
    },
  };
}

import { existsSync, readdirSync, renameSync, rmSync, statSync, truncateSync, createReadStream, createWriteStream, copyFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { createGzip } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { badRequest } from '../../core/errors.js';
import { dataPath, writeDataFile } from '../common/data-files.js';
import { logrotateDirective, logrotatePath } from '../../render/system/logrotate.js';
import { DAEMON_LOG_PROGRAMS } from './daemon-log-files.js';

/** The logs Bulwark manages: all inside the data directory's logs/ folder. */
export const MANAGED_LOGS: { service: string; file: string }[] = [
  { service: 'bulwark-api', file: 'api.log' },
  ...DAEMON_LOG_PROGRAMS.map((program) => ({ service: program, file: `${program}.log` })),
  { service: 'audit', file: 'audit.log' },
];

export interface RotationConfig {
  max_size_mb: number;
  keep: number;
  compression: 'none' | 'gzip';
}

export function managedPaths(dataDir: string): { service: string; path: string }[] {
  return MANAGED_LOGS.map(({ service, file }) => ({ service, path: dataPath(dataDir, 'logs', file) }));
}

const generations = (path: string) => {
  const dir = dirname(path);
  if (!existsSync(dir)) return [];
  const prefix = `${basename(path)}.`;
  return readdirSync(dir).filter((name) => name.startsWith(prefix) && /^\d+(\.gz)?$/.test(name.slice(prefix.length))).map((name) => `${dir}/${name}`);
};

export function logSizes(dataDir: string) {
  return managedPaths(dataDir).map(({ service, path }) => {
    const size = existsSync(path) ? statSync(path).size : null;
    const rotated = generations(path);
    return { service, path, size_bytes: size, rotated: rotated.length, total_bytes: (size ?? 0) + rotated.reduce((n, p) => n + statSync(p).size, 0) };
  });
}

/** A logrotate(8) fragment equivalent to the policy, for a host whose own logrotate runs the rotation. */
export function renderLogrotate(dataDir: string, config: RotationConfig): string {
  const paths = managedPaths(dataDir).map((l) => logrotatePath(l.path, `log path ${l.service}`)).join('\n');
  const directives = [
    logrotateDirective('size', `${config.max_size_mb}M`, 'settings.log_rotation.max_size_mb'),
    logrotateDirective('rotate', config.keep, 'settings.log_rotation.keep'),
    logrotateDirective(config.compression === 'gzip' ? 'compress' : 'nocompress', '', 'settings.log_rotation.compression'),
    logrotateDirective('missingok', '', 'logrotate'),
    logrotateDirective('notifempty', '', 'logrotate'),
    logrotateDirective('copytruncate', '', 'logrotate'),
  ];
  return `# Rendered by Bulwark\n${paths} {\n${directives.map((d) => `    ${d}`).join('\n')}\n}\n`;
}

/**
 * Rotates one file: shifts generations, copies and truncates the live file (writers keep their descriptor). The
 * copy and the truncation are synchronous, so no line Bulwark writes (local-logs.ts, same event loop) falls
 * between them; compression then works on the copy.
 */
async function rotateFile(path: string, config: RotationConfig): Promise<void> {
  for (const old of generations(path)) {
    const n = Number(/\.(\d+)(\.gz)?$/.exec(old)![1]);
    if (n >= config.keep) rmSync(old, { force: true });
  }
  for (let n = config.keep - 1; n >= 1; n--) {
    for (const ext of ['', '.gz']) if (existsSync(`${path}.${n}${ext}`)) renameSync(`${path}.${n}${ext}`, `${path}.${n + 1}${ext}`);
  }
  if (config.keep === 0) {
    truncateSync(path, 0);
    return;
  }
  const copy = config.compression === 'gzip' ? `${path}.1.tmp` : `${path}.1`;
  copyFileSync(path, copy);
  truncateSync(path, 0);
  if (config.compression === 'gzip') {
    await pipeline(createReadStream(copy), createGzip(), createWriteStream(`${path}.1.gz`));
    rmSync(copy, { force: true });
  }
}

/**
 * One rotation pass. With `path`, that managed log is rotated whatever its size; without, every managed log
 * above the size cap is. Returns the rotated paths.
 */
export async function rotate(dataDir: string, config: RotationConfig, path?: string): Promise<string[]> {
  const logs = managedPaths(dataDir);
  if (path !== undefined) {
    const target = logs.find((l) => l.path === path || l.service === path);
    if (!target) throw badRequest(`body.path must be one of the managed logs: ${logs.map((l) => l.path).join(', ')}`);
    if (!existsSync(target.path)) return [];
    await rotateFile(target.path, config);
    return [target.path];
  }
  const rotated: string[] = [];
  for (const { path: file } of logs) {
    if (existsSync(file) && statSync(file).size > config.max_size_mb * 1024 * 1024) {
      await rotateFile(file, config);
      rotated.push(file);
    }
  }
  return rotated;
}

export function writeRotationConfig(dataDir: string, config: RotationConfig): string {
  return writeDataFile(dataDir, ['logrotate.conf'], renderLogrotate(dataDir, config), 0o644);
}

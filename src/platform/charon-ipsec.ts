import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { conflict, unavailable } from '../core/errors.js';
import { findProgram as findInstalled } from './daemon-tools.js';
import { describeMissing, missingTool, type MissingTool } from './debian-packages.js';
import { runCommand } from './exec.js';
import type { IpsecControl, IpsecDataPath, IpsecDaemonStatus, IpsecFiles } from './ipsec.js';
import { SupervisedProcess } from './supervised-process.js';
import { parseListSas } from './swanctl-sas.js';

export interface CharonOptions {
  /** The charon program (`charon-systemd` on Debian; `charon` from strongSwan's libexec elsewhere). */
  program: string;
  /** Its settings section in strongswan.conf. */
  daemon: string;
  /** How ESP is carried on this host. */
  dataPath: () => Promise<IpsecDataPath>;
  kernelPlugins: Record<IpsecDataPath, string[]>;
  /** What else must be installed for that data path (plugin files), checked before charon starts. */
  missing?: (dataPath: IpsecDataPath) => MissingTool | null;
  findProgram?: (program: string) => string | null;
}

/** Subdirectories swanctl reads credentials from (created so it reports nothing about absent ones). */
const SWANCTL_SUBDIRS = ['x509', 'x509ca', 'x509aa', 'x509ocsp', 'x509crl', 'x509ac', 'pubkey', 'private', 'rsa', 'ecdsa', 'bliss', 'pkcs8', 'pkcs12'];

/**
 * A line of swanctl's output that says a load failed, printable and without anything that could be a secret.
 * swanctl exits 0 on a syntax error of its file, so its lines are read rather than its status trusted.
 */
export function swanctlFailure(output: string): string | null {
  const line = output.split('\n').map((l) => l.trim()).find((l) => /invalid config|failed|error|unable|not found|unknown/i.test(l) && !/^plugin '/.test(l));
  if (!line) return null;
  return line.replace(/secret.*$/i, 'secret …').replace(/[^\x20-\x7e]/g, '').slice(0, 200);
}

/**
 * charon in the foreground under Bulwark's supervision (restarted, and its configuration loaded again, when it
 * dies), configured only through swanctl over the appliance's own VICI socket: several appliances (tests) on
 * one host each run their own. strongSwan's packages provide no system user: charon runs as root.
 */
export function createCharonIpsec(options: CharonOptions): IpsecControl {
  const find = options.findProgram ?? findInstalled;
  let supervised: SupervisedProcess | null = null;
  let files: IpsecFiles | null = null;
  let dataPath: IpsecDataPath | null = null;

  const swanctl = async (args: string[], current: IpsecFiles) => {
    const program = find('swanctl');
    if (!program) throw unavailable(describeMissing(missingTool('swanctl')));
    return runCommand(program, [...args, '--uri', `unix://${current.viciSocket}`], {
      timeoutMs: 20_000,
      env: { ...process.env, STRONGSWAN_CONF: current.strongswanConf, SWANCTL_DIR: current.swanctlDir },
    });
  };

  const load = async (current: IpsecFiles) => {
    const result = await swanctl(['--load-all', '--clear', '--file', join(current.swanctlDir, 'swanctl.conf')], current);
    const failure = result.code !== 0 ? swanctlFailure(`${result.stderr}\n${result.stdout}`) ?? `exit status ${result.code}` : swanctlFailure(`${result.stderr}\n${result.stdout}`);
    if (failure) throw conflict(`strongSwan refused the IPsec configuration (charon keeps what it had loaded): ${failure}`);
  };

  const stop = async () => {
    await supervised?.stop();
    supervised = null;
  };

  return {
    daemon: options.daemon,
    kernelPlugins: options.kernelPlugins,
    async dataPath() {
      dataPath ??= await options.dataPath();
      return dataPath;
    },
    async apply(next) {
      const program = find(options.program);
      if (!program) throw unavailable(describeMissing(missingTool(options.program)));
      if (!find('swanctl')) throw unavailable(describeMissing(missingTool('swanctl')));
      const path = await this.dataPath();
      const missing = options.missing?.(path);
      if (missing) throw unavailable(describeMissing(missing));
      for (const dir of SWANCTL_SUBDIRS) mkdirSync(join(next.swanctlDir, dir), { recursive: true, mode: 0o700 });
      if (supervised && files && (files.strongswanConf !== next.strongswanConf || files.viciSocket !== next.viciSocket)) await stop();
      files = next;
      if (!supervised?.alive) {
        const current = next;
        supervised = new SupervisedProcess({
          label: options.program,
          command: program,
          args: [],
          env: { STRONGSWAN_CONF: current.strongswanConf },
          readyTimeoutMs: 15_000,
          // Detached beside its strongswan.conf (root only): it outlives the API and is adopted, then reloaded, at the next start.
          detached: { dir: dirname(current.strongswanConf), name: 'charon', configHash: null },
          ready: async () => existsSync(current.viciSocket) && (await swanctl(['--stats'], current)).code === 0,
          afterRestart: async () => {
            writeFileSync(current.pidFile, `${supervised?.state().pid ?? ''}\n`);
            await load(current);
          },
        });
        await supervised.start().catch((error: Error) => {
          throw conflict(error.message);
        });
        writeFileSync(next.pidFile, `${supervised.state().pid ?? ''}\n`);
      }
      await load(next);
    },
    stop,
    release() {
      supervised?.release();
      supervised = null;
    },
    async status(): Promise<IpsecDaemonStatus> {
      const state = supervised?.state();
      const base = {
        running: state?.running ?? false,
        backend: 'charon' as const,
        data_path: dataPath,
        pid: state?.pid ?? null,
        restarts: state?.restarts ?? 0,
        last_error: state?.last_error ?? null,
      };
      if (!files || !state?.running) return { ...base, sas: [] };
      const listed = await swanctl(['--list-sas', '--raw'], files);
      return { ...base, sas: listed.code === 0 ? parseListSas(listed.stdout) : [] };
    },
  };
}

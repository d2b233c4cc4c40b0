/**
 * High availability on Linux: Debian's keepalived runs the VRRP instances of /cluster/carp and conntrackd the
 * FTFW state sync of /cluster/pfsync. Both run as root (they change addresses and the kernel's connection table),
 * supervised in the foreground and detached: they outlive the API and the next start adopts them (a changed
 * configuration replaces them). Promote, demote and health checks only rewrite keepalived's track files, which it
 * watches: the priority moves without a reload.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { conflict, unavailable } from '../../core/errors.js';
import { isRenderRefusal } from '../../render/refusal.js';
import { renderKeepalivedConf, renderNotifyScript } from '../../render/keepalived/keepalived.js';
import { renderConntrackdConf } from '../../render/conntrackd/conntrackd.js';
import { findProgram } from '../daemon-tools.js';
import { describeMissing, missingTool } from '../debian-packages.js';
import { runtimeRoot } from '../daemon-runtime.js';
import { runCommand } from '../exec.js';
import { SupervisedProcess } from '../supervised-process.js';
import type { HaEngine, HaSpec, HaStatus } from '../ha.js';

const READY_TIMEOUT_MS = 15_000;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** The first address of an interface in the family of `like` (the local end of the sync link). */
async function interfaceAddress(name: string, v6: boolean): Promise<string | null> {
  const result = await runCommand('ip', ['-j', v6 ? '-6' : '-4', 'addr', 'show', 'dev', name]);
  if (result.code !== 0) return null;
  try {
    const [entry] = JSON.parse(result.stdout) as Array<{ addr_info?: Array<{ local?: string; scope?: string }> }>;
    return entry?.addr_info?.find((info) => info.scope === 'global')?.local ?? null;
  } catch {
    return null;
  }
}

/** conntrackd -s: the internal and external cache sizes, the messages lost and the bytes moved on the sync link. */
export function parseConntrackdStats(text: string): { internal: number | null; external: number | null; errors: number | null; sent: number | null; received: number | null } {
  const section = (name: string) => {
    const match = new RegExp(`cache ${name}:[\\s\\S]*?current active connections:\\s+(\\d+)`).exec(text);
    return match ? Number(match[1]) : null;
  };
  const lost = [...text.matchAll(/(\d+)\s+(?:msgs lost|Malformed msgs|Malformed|failed)/gi)].reduce((sum, m) => sum + Number(m[1]), 0);
  const traffic = /(\d+)\s+Bytes sent\s+(\d+)\s+Bytes recv/i.exec(text);
  return {
    internal: section('internal'), external: section('external'), errors: /network statistics|Sequence tracking/i.test(text) ? lost : null,
    sent: traffic ? Number(traffic[1]) : null, received: traffic ? Number(traffic[2]) : null,
  };
}

export function createKeepalivedEngine(): HaEngine {
  let keepalived: SupervisedProcess | null = null;
  let conntrackd: SupervisedProcess | null = null;
  let dir: string | null = null;
  let lastError: string | null = null;
  let conntrackdConf: string | null = null;
  let keepalivedHash: string | null = null;
  let conntrackdHash: string | null = null;

  const files = (base: string) => ({
    keepalivedConf: join(base, 'keepalived.conf'), conntrackdConf: join(base, 'conntrackd.conf'), notify: join(base, 'notify.sh'),
    demotion: join(base, 'demotion'), health: join(base, 'health'), state: join(base, 'vrrp-state'), pid: join(base, 'keepalived.pid'),
    vrrpPid: join(base, 'vrrp.pid'), lock: join(base, 'conntrackd.lock'), socket: join(base, 'conntrackd.ctl'), ctLog: join(base, 'conntrackd.log'),
  });

  const stopAll = async () => {
    await keepalived?.stop();
    await conntrackd?.stop();
    keepalived = null;
    conntrackd = null;
    conntrackdConf = null;
  };

  // The notify hook writes MASTER, BACKUP, FAULT or STOP into the state file at every transition.
  const vrrpState = (): HaStatus['vrrp_state'] => {
    const f = dir ? files(dir) : null;
    if (!f || !keepalived || !existsSync(f.state)) return null;
    const text = readFileSync(f.state, 'utf8').trim();
    return text === 'MASTER' ? 'master' : text === '' ? null : 'backup';
  };

  const status = async (): Promise<HaStatus> => {
    let stateSync: HaStatus['state_sync'] = null;
    if (conntrackd && conntrackdConf) {
      const program = findProgram('conntrackd');
      const result = program ? await runCommand(program, ['-C', conntrackdConf, '-s'], { timeoutMs: 5_000 }) : null;
      const network = program ? await runCommand(program, ['-C', conntrackdConf, '-s', 'network'], { timeoutMs: 5_000 }) : null;
      const stats = parseConntrackdStats(`${result?.stdout ?? ''}\n${network?.stdout ?? ''}`);
      const state = conntrackd.state();
      stateSync = {
        running: state.running, internal_entries: stats.internal, external_entries: stats.external, errors: stats.errors, last_error: state.last_error,
        bytes_sent: stats.sent, bytes_received: stats.received,
      };
    }
    const kState = keepalived?.state();
    return { engine: 'keepalived', running: kState?.running ?? false, vrrp_state: vrrpState(), state_sync: stateSync, last_error: kState?.last_error ?? lastError };
  };

  return {
    async apply(spec: HaSpec | null): Promise<HaStatus> {
      if (!spec || spec.addresses.length === 0) {
        await stopAll();
        return status();
      }
      const keepalivedProgram = findProgram('keepalived');
      if (!keepalivedProgram) throw unavailable(describeMissing(missingTool('keepalived')));
      const conntrackdProgram = spec.stateSync ? findProgram('conntrackd') : null;
      if (spec.stateSync && !conntrackdProgram) throw unavailable(describeMissing(missingTool('conntrackd')));
      dir = join(runtimeRoot(spec.runtime), 'keepalived');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      chmodSync(dir, 0o700);
      const f = files(dir);
      let keepalivedText: string;
      let conntrackdText: string | null = null;
      try {
        if (spec.stateSync) {
          const v6 = spec.stateSync.syncPeer.includes(':');
          const local = await interfaceAddress(spec.stateSync.syncInterface, v6);
          if (!local) throw conflict(`state sync: interface ${spec.stateSync.syncInterface} has no ${v6 ? 'IPv6' : 'IPv4'} address`);
          conntrackdText = renderConntrackdConf({
            syncInterface: spec.stateSync.syncInterface, localAddress: local, peerAddress: spec.stateSync.syncPeer,
            ignoreAddresses: spec.addresses.filter((a) => a.virtualIp.includes(':') === v6).map((a) => a.virtualIp),
          }, { lockFile: f.lock, socket: f.socket, logFile: f.ctLog });
        }
        const notifyText = renderNotifyScript(conntrackdText && conntrackdProgram ? { program: conntrackdProgram, config: f.conntrackdConf } : null, f.state);
        writeFileSync(f.notify, notifyText, { mode: 0o700 });
        keepalivedText = renderKeepalivedConf({ role: spec.role, addresses: spec.addresses, routerId: 'bulwark' }, { demotionFile: f.demotion, healthFile: f.health, notifyScript: f.notify });
      } catch (error) {
        if (isRenderRefusal(error)) throw conflict(`high availability refused: ${error.message}`);
        throw error;
      }
      writeFileSync(f.demotion, `${spec.demotion}\n`, { mode: 0o600 });
      writeFileSync(f.health, `${spec.failingChecks}\n`, { mode: 0o600 });
      try {
        if (conntrackdText && conntrackdProgram) {
          writeFileSync(f.conntrackdConf, conntrackdText, { mode: 0o600 });
          if (!conntrackd || conntrackdHash !== sha(conntrackdText)) {
            await conntrackd?.stop();
            conntrackdHash = sha(conntrackdText);
            conntrackd = new SupervisedProcess({
              label: 'conntrackd', command: conntrackdProgram, args: ['-C', f.conntrackdConf],
              ready: async () => existsSync(f.socket), readyTimeoutMs: READY_TIMEOUT_MS, readyDescription: 'open its control socket',
              detached: { dir, name: 'conntrackd.supervised', configHash: sha(conntrackdText) },
            });
          }
          conntrackdConf = f.conntrackdConf;
          await conntrackd.start();
        } else {
          await conntrackd?.stop();
          conntrackd = null;
          conntrackdConf = null;
        }
        writeFileSync(f.keepalivedConf, keepalivedText, { mode: 0o600 });
        const hash = sha(keepalivedText + (conntrackdText ?? ''));
        if (keepalived && keepalived.alive && keepalivedHash === hash) return status();
        await keepalived?.stop();
        keepalivedHash = hash;
        keepalived = new SupervisedProcess({
          label: 'keepalived', command: keepalivedProgram,
          // -n: stay in the foreground (its VRRP child is supervised by it); -P: VRRP only; -l: log to the console.
          args: ['-n', '-l', '-D', '-P', '-f', f.keepalivedConf, '-p', f.pid, '-r', f.vrrpPid],
          ready: async () => existsSync(f.vrrpPid), readyTimeoutMs: READY_TIMEOUT_MS, readyDescription: 'start its VRRP process',
          detached: { dir, name: 'keepalived.supervised', configHash: hash },
        });
        await keepalived.start();
        lastError = null;
      } catch (error) {
        lastError = (error as Error).message;
        if ((error as { statusCode?: number }).statusCode) throw error;
        throw conflict(`high availability: ${lastError}`);
      }
      return status();
    },
    async adjust(demotion: number, failingChecks: number) {
      if (!dir) return;
      const f = files(dir);
      writeFileSync(f.demotion, `${demotion}\n`, { mode: 0o600 });
      writeFileSync(f.health, `${failingChecks}\n`, { mode: 0o600 });
    },
    status,
    vrrpState,
    async close() {
      keepalived?.release();
      conntrackd?.release();
    },
  };
}

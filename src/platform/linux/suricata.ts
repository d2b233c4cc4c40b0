/**
 * The IDS engine on Linux: a Suricata installation when one is present (Debian 12 does not package it).
 * Without `suricata` every control call answers 503 saying what to install, and the status says so; the IDS
 * area's rules, search, suppressions and EVE imports do not need the engine. With it: the rendered
 * rulesets are merged by suricata-update, the configuration is checked with `suricata -T`, the engine runs in the foreground under Bulwark's supervision
 * (af-packet for IDS, NFQUEUE for IPS; it drops to the `suricata` user when that account exists), rule changes
 * reach a running engine through SIGUSR2 (a live rule reload), and its EVE JSON is followed: alerts go to the
 * listeners (the IDS area stores them), stats records become the engine's counters.
 *
 * The engine is detached (src/platform/supervised-process.ts): stopping or restarting the API leaves it inspecting,
 * and the next start adopts it by its pid record (same pid, start time and program) when it runs the same
 * configuration and command line, then hands it the freshly merged rules with a live reload (SIGUSR2); another
 * configuration replaces it. Suricata's unix-command socket is not enabled, so an adopted engine's identity is
 * its pid record, not an answer on a control channel.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { IdsEngine, IdsEngineStatus, IdsInstall } from '../ids-engine.js';
import { findProgram as findInstalledProgram } from '../daemon-tools.js';
import { runCommand } from '../exec.js';
import { systemAccount } from '../daemon-runtime.js';
import { describeMissing, missingTool } from '../debian-packages.js';
import { conflict, unavailable } from '../../core/errors.js';
import { EveTail } from './eve-tail.js';
import { SupervisedProcess } from '../supervised-process.js';

const READY_TIMEOUT_MS = 60_000;
/** The table of the IPS queue rule: its own, so the packet filter's ruleset replaces never touch it. */
export const IPS_TABLE = 'bulwark_ips';

/**
 * Forwarded packets the packet filter let through (its chains hook prerouting and postrouting, around this
 * one) go to Suricata's queue for a verdict; `bypass` lets them pass while no engine listens (fail-open, as
 * the nfq section of suricata.yaml).
 */
export function ipsQueueRuleset(queue: number): string {
  if (!Number.isInteger(queue) || queue < 0 || queue > 65535) throw new Error('queue number out of range');
  return [
    `table inet ${IPS_TABLE} {`,
    '\tchain forward {',
    '\t\ttype filter hook forward priority filter; policy accept;',
    `\t\tqueue num ${queue} bypass comment "IPS: Suricata verdict"`,
    '\t}',
    '}',
    '',
  ].join('\n');
}
const MAX_LOG = 2000;

export interface SuricataOptions {
  findProgram?: (program: string) => string | null;
  now?: () => number;
}

/** One printable line of Suricata's output, short. */
const printable = (line: string) => line.replace(/[^\x20-\x7e]/g, '').trim().slice(0, 200);

/** Suricata's counters from an EVE stats record. */
function countersOf(stats: Record<string, any>) {
  const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  return {
    packets: number(stats.decoder?.pkts) || number(stats.capture?.kernel_packets),
    bytes: number(stats.decoder?.bytes),
    drops: number(stats.capture?.kernel_drops) + number(stats.ips?.blocked),
    alerts: number(stats.detect?.alert),
    flows: number(stats.flow?.active),
    reassembly: number(stats.tcp?.reassembly_memuse),
    uptime: number(stats.uptime),
  };
}

export function createSuricataEngine(options: SuricataOptions = {}): IdsEngine & { close(): Promise<void>; stopAll(): Promise<void> } {
  const findProgram = options.findProgram ?? findInstalledProgram;
  const now = options.now ?? Date.now;
  const listeners = new Set<(lines: string) => void>();
  let supervisor: SupervisedProcess | null = null;
  let install: IdsInstall | null = null;
  let mode: 'ids' | 'ips' | 'disabled' = 'disabled';
  let runningConfig = '';
  let loadedRules = 0;
  let startedAt = 0;
  let tail: EveTail | null = null;
  let alertsSeen = 0;
  let counters = { packets: 0, bytes: 0, drops: 0, alerts: 0, flows: 0, reassembly: 0, uptime: 0 };
  let rates = { packets: 0, bytes: 0, at: 0 };
  const log: string[] = [];
  let version: string | null = null;

  const alive = () => supervisor?.alive === true;
  const program = () => {
    const found = findProgram('suricata');
    if (!found) throw unavailable(`the IDS engine cannot run: ${describeMissing(missingTool('suricata'))}`);
    return found;
  };

  /** EVE lines: stats records update the counters; every line goes to the listeners (which store alerts). */
  const onLines = (text: string) => {
    for (const line of text.split('\n')) {
      if (!line.includes('"stats"')) continue;
      try {
        const event = JSON.parse(line) as { event_type?: string; stats?: Record<string, any> };
        if (event.event_type !== 'stats' || !event.stats) continue;
        const next = countersOf(event.stats);
        const at = now();
        if (rates.at && at > rates.at) {
          const seconds = (at - rates.at) / 1000;
          rates = { packets: Math.max(0, (next.packets - counters.packets) / seconds), bytes: Math.max(0, (next.bytes - counters.bytes) / seconds), at };
        } else rates = { packets: 0, bytes: 0, at };
        counters = next;
      } catch {
        // not a record
      }
    }
    for (const listener of listeners) listener(text);
  };

  /** Installs or removes the IPS queue rule (nft, from stdin). */
  const queueRule = async (next: IdsInstall | null) => {
    const nft = findProgram('nft');
    if (!nft) throw unavailable(`the IPS queue rule cannot be installed: ${describeMissing(missingTool('nft'))}`);
    await runCommand(nft, ['delete', 'table', 'inet', IPS_TABLE], { timeoutMs: 10_000 });
    if (!next) return;
    const result = await runCommand(nft, ['-f', '-'], { input: ipsQueueRuleset(next.queue), timeoutMs: 10_000 });
    if (result.code === 0) return;
    // ENOENT on the rule is how the kernel says it has no queue expression (CONFIG_NFT_QUEUE).
    if (/Could not process rule: No such file or directory/.test(result.stderr)) throw conflict('IPS needs the kernel\'s nftables queue support (nft_queue), which this kernel lacks: use IDS mode');
    throw conflict(`nft refused the IPS queue rule: ${printable(result.stderr.split('\n')[0] ?? '')}`);
  };

  const stop = async () => {
    if (mode === 'ips') await queueRule(null);
    tail?.stop();
    tail = null;
    await supervisor?.stop();
    supervisor = null;
  };

  /**
   * suricata-update merges the rulesets' files into `ruleDir/suricata.rules` (no download: the files were
   * fetched through the outbound guard by the IDS area and are read here as file:// sources).
   */
  const merge = async (next: IdsInstall): Promise<void> => {
    const tool = findProgram('suricata-update');
    if (!tool) throw unavailable(`the IDS rules cannot be merged: ${describeMissing(missingTool('suricata-update'))}`);
    const versionText = (await runCommand(program(), ['-V'], { timeoutMs: 5000 })).stdout;
    const [first, ...rest] = next.sources;
    const result = await runCommand(tool, [
      '--quiet', '--force', '--data-dir', join(next.ruleDir, 'update'), '--no-test', '--no-reload', '--fail', '--suricata-conf', next.configFile,
      '--suricata', program(), '--suricata-version', /(\d+\.\d+\.\d+)/.exec(versionText)?.[1] ?? '7.0.0',
      '-o', next.ruleDir, '--url', pathToFileURL(first).href, ...rest.flatMap((file) => ['--local', file]),
    ], { timeoutMs: 300_000 });
    if (result.code !== 0) {
      const error = `${result.stdout}\n${result.stderr}`.split('\n').map(printable).filter((line) => /error/i.test(line)).at(-1);
      throw conflict(`suricata-update could not merge the rulesets${error ? `: ${error}` : ''}`);
    }
  };

  /** `suricata -T`: null when the configuration and rules load, else one line saying why. */
  const check = async (next: IdsInstall): Promise<string | null> => {
    const result = await runCommand(program(), ['-T', '-c', next.configFile, '-l', next.logDir], { timeoutMs: 300_000 });
    if (result.code === 0) return null;
    const lines = `${result.stdout}\n${result.stderr}`.split('\n').map(printable).filter(Boolean);
    // Suricata's own error lines name the problem ("<Error> - [ERRCODE: …] - …"); file contents stay out.
    const error = lines.filter((line) => /error/i.test(line)).at(-1) ?? lines.at(-1);
    return `suricata -T refused the configuration${error ? `: ${error}` : ''}`;
  };

  /** The API process stops: the engine keeps inspecting (and the IPS queue rule stays) for the next start to adopt. */
  const release = async () => {
    tail?.stop();
    tail = null;
    supervisor?.release();
    supervisor = null;
  };

  /** `adoptOnly`: only take over an engine left running with this configuration (its rules were refused now). */
  const start = async (next: IdsInstall, nextMode: 'ids' | 'ips', configText: string, adoptOnly = false) => {
    const capture = nextMode === 'ips' ? ['-q', String(next.queue)] : ['--af-packet'];
    const user = systemAccount('suricata') ? ['--user', 'suricata', '--group', 'suricata'] : [];
    const command = program();
    const args = ['-c', next.configFile, '-l', next.logDir, ...capture, ...user];
    /** The pid of the run whose output said the engine started (so a restarted run is waited for afresh). */
    let readyPid: number | null = null;
    const runStart = log.length;
    // An engine that dies is started again with the same files (configuration, merged rules, queue number); the
    // IPS queue rule stays in place meanwhile and lets packets through (bypass).
    const started = new SupervisedProcess({
      label: 'suricata', command, args, readyTimeoutMs: READY_TIMEOUT_MS,
      // A run started here is ready when its output says so; an adopted one passed the pid-record identity check.
      ready: async () => started.state().adopted || (readyPid !== null && readyPid === started.state().pid),
      // The pid record beside the merged rules in the root-owned runtime directory (never the engine's log directory).
      detached: { dir: next.ruleDir, name: 'suricata.supervised', configHash: createHash('sha256').update(JSON.stringify({ command, args, configText })).digest('hex') },
      onLine: (line) => {
        log.push(line);
        if (log.length > MAX_LOG) log.splice(0, log.length - MAX_LOG);
        if (/engine started|threads are running|running in .* mode/i.test(line)) readyPid = started.state().pid;
      },
      afterRestart: async () => {
        startedAt = now();
      },
    });
    supervisor = started;
    startedAt = now();
    alertsSeen = 0;
    counters = { packets: 0, bytes: 0, drops: 0, alerts: 0, flows: 0, reassembly: 0, uptime: 0 };
    // Only what is written from now on is new: earlier runs' alerts were read (or imported) already.
    tail = new EveTail(join(next.logDir, 'eve.json'), onLines, true);
    tail.start();
    if (adoptOnly) {
      if (await started.adoptOnly()) return;
      await stop();
      throw conflict('no engine with the applied configuration runs to adopt');
    }
    try {
      // Adopted: it runs this configuration already; the rules just merged reach it by a live reload.
      if ((await started.start()) === 'adopted') started.signal('SIGUSR2');
    } catch {
      const reason = log.slice(runStart).map(printable).filter((line) => /error/i.test(line)).at(-1);
      await stop();
      throw conflict(`Suricata did not start${reason ? `: ${reason}` : ''}`);
    }
  };

  return {
    kind: 'suricata',
    async reload(request) {
      program();
      if (request.mode === 'disabled') {
        await stop();
        mode = 'disabled';
        loadedRules = 0;
        return;
      }
      if (!request.install) throw conflict('the IDS engine needs its rendered configuration');
      let problem: string | null;
      try {
        await merge(request.install);
        problem = await check(request.install);
      } catch (error) {
        if (!request.restoring) throw error;
        problem = (error as Error).message;
      }
      if (problem && request.restoring && !alive()) {
        // A start of Bulwark: the engine left running keeps its last good rules, supervised; the start reports why.
        const configText = await readFile(request.install.configFile, 'utf8');
        await start(request.install, request.mode, configText, true).catch(() => undefined);
        if (alive()) {
          install = request.install;
          mode = request.mode;
          runningConfig = configText;
          loadedRules = request.rules.split('\n').filter((line) => line.trim() && !line.trimStart().startsWith('#')).length;
          if (mode === 'ips') await queueRule(request.install).catch(() => undefined);
        }
      }
      if (problem) throw conflict(problem);
      const configText = await readFile(request.install.configFile, 'utf8');
      loadedRules = request.rules.split('\n').filter((line) => line.trim() && !line.trimStart().startsWith('#')).length;
      if (alive() && mode === request.mode && configText === runningConfig && install?.configFile === request.install.configFile) {
        // Same configuration, new rules: Suricata reloads its rules live on SIGUSR2.
        supervisor!.signal('SIGUSR2');
        return;
      }
      await stop();
      await start(request.install, request.mode, configText);
      install = request.install;
      mode = request.mode;
      runningConfig = configText;
      if (mode === 'ips') {
        try {
          await queueRule(request.install);
        } catch (error) {
          await stop();
          mode = 'disabled';
          throw error;
        }
      }
    },
    async status(): Promise<IdsEngineStatus> {
      const found = findProgram('suricata');
      if (version === null && found) version = printable((await runCommand(found, ['-V'], { timeoutMs: 5000 })).stdout.split('\n')[0] ?? '') || 'suricata';
      const running = alive();
      return {
        running, mode: running ? mode : 'disabled', loaded_rules: running ? loadedRules : 0,
        packets_inspected: counters.packets, alerts_total: Math.max(counters.alerts, alertsSeen), drops_total: counters.drops,
        bytes_per_sec: Math.round(rates.bytes), packets_per_sec: Math.round(rates.packets), flow_count: counters.flows,
        flow_reassembly_bytes: counters.reassembly, uptime_secs: running ? Math.floor((now() - startedAt) / 1000) : 0,
        installed: found !== null,
        engine: found ? (version ?? 'suricata') : `Suricata is not installed: ${describeMissing(missingTool('suricata'))}`,
        restarts: supervisor?.state().restarts ?? 0, last_error: supervisor?.state().last_error ?? null,
      };
    },
    async countAlerts(count) {
      alertsSeen += count;
    },
    onEve(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: release,
    stopAll: stop,
  };
}

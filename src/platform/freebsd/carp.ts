/**
 * High availability on FreeBSD: the virtual addresses of /cluster/carp as CARP addresses set with `ifconfig`
 * (`vhid`, `advskew`, `pass`, `alias`), pfsync for the state table (`ifconfig pfsync0 syncdev … syncpeer …`), and
 * CARP preemption on (`net.inet.carp.preempt=1`: every address moves together, and the primary takes them back).
 * The VRRP priority of the linux engine becomes CARP's advertisement skew (lower wins): advskew = 200 - priority,
 * so the primary (150) advertises with 50, the secondary (100) with 100, a demotion (240) or each failing health
 * check (60) raise it, a promoted secondary (200) advertises with 0. Every value is one argument (no shell); the
 * password is one word by the schema.
 */
import { conflict } from '../../core/errors.js';
import { DEMOTED, HEALTH_WEIGHT, ROLE_PRIORITY } from '../../render/keepalived/keepalived.js';
import { runCommand } from '../exec.js';
import type { HaEngine, HaSpec, HaStatus, VrrpAddress } from '../ha.js';

const PFSYNC = 'pfsync0';
/** advskew = SKEW_BASE - priority, within CARP's 0..254. */
const SKEW_BASE = 200;

/** CARP's advertisement skew for a node's role, demotion and failing checks. */
export function advskew(role: HaSpec['role'], demotion: number, failingChecks: number): number {
  const priority = ROLE_PRIORITY[role] - Math.min(demotion, DEMOTED) - HEALTH_WEIGHT * failingChecks;
  return Math.max(0, Math.min(254, SKEW_BASE - priority));
}

const addressArgs = (address: Pick<VrrpAddress, 'virtualIp' | 'prefix'>): string[] =>
  [address.virtualIp.includes(':') ? 'inet6' : 'inet', `${address.virtualIp}/${address.prefix}`];

/** The ifconfig/sysctl argument lists that make the kernel hold `spec` (removals of stale addresses come first). */
export function carpCommands(spec: HaSpec, present: readonly CarpAddress[]): { tool: 'ifconfig' | 'sysctl'; args: string[] }[] {
  const skew = String(advskew(spec.role, spec.demotion, spec.failingChecks));
  const wanted = new Set(spec.addresses.map((address) => `${address.interface} ${address.virtualIp}`));
  const commands: { tool: 'ifconfig' | 'sysctl'; args: string[] }[] = [];
  for (const stale of present) {
    if (!wanted.has(`${stale.interface} ${stale.address}`)) commands.push({ tool: 'ifconfig', args: [stale.interface, stale.address.includes(':') ? 'inet6' : 'inet', stale.address, '-alias'] });
  }
  commands.push({ tool: 'sysctl', args: ['net.inet.carp.preempt=1'] });
  for (const address of spec.addresses) {
    // The handbook's form: `ifconfig em0 inet vhid 1 advskew 100 pass testpass alias 192.168.1.50/32`.
    const [family, cidr] = addressArgs(address);
    commands.push({ tool: 'ifconfig', args: [address.interface, family, 'vhid', String(address.vhid), 'advskew', skew, 'pass', address.password, 'alias', cidr] });
  }
  commands.push(spec.stateSync
    ? { tool: 'ifconfig', args: [PFSYNC, 'syncdev', spec.stateSync.syncInterface, 'syncpeer', spec.stateSync.syncPeer, 'up'] }
    : { tool: 'ifconfig', args: [PFSYNC, '-syncdev', '-syncpeer', 'down'] });
  return commands;
}

export interface CarpAddress { interface: string; address: string; vhid: number }
export interface CarpState { vhid: number; state: string; advskew: number }

/** `ifconfig -a`: the CARP addresses (`inet … vhid N`) and the state of each vhid (`carp: MASTER vhid N advbase 1 advskew 50`). */
export function parseCarp(text: string): { addresses: CarpAddress[]; states: CarpState[] } {
  const addresses: CarpAddress[] = [];
  const states: CarpState[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    const header = /^([A-Za-z0-9_.-]+): flags=/.exec(line);
    if (header) {
      current = header[1];
      continue;
    }
    const address = /^\s+inet6? ([0-9A-Fa-f:.]+)(?:%\S+)? .*\bvhid (\d+)/.exec(line);
    if (address) addresses.push({ interface: current, address: address[1], vhid: Number(address[2]) });
    const carp = /^\s+carp: (\S+) vhid (\d+) advbase \d+ advskew (\d+)/.exec(line);
    if (carp) states.push({ vhid: Number(carp[2]), state: carp[1], advskew: Number(carp[3]) });
  }
  return { addresses, states };
}

async function ifconfigAll(): Promise<string> {
  const result = await runCommand('ifconfig', ['-a'], { timeoutMs: 10_000 });
  return result.code === 0 ? result.stdout : '';
}

export function createFreebsdCarp(): HaEngine {
  let current: HaSpec | null = null;
  let lastStates: CarpState[] = [];
  const vrrpState = (): HaStatus['vrrp_state'] => {
    const mine = lastStates.filter((state) => current?.addresses.some((address) => address.vhid === state.vhid));
    if (!current || mine.length === 0) return null;
    if (mine.every((state) => state.state === 'MASTER')) return 'master';
    return mine.every((state) => state.state !== 'MASTER') ? 'backup' : 'mixed';
  };
  const run = async (tool: 'ifconfig' | 'sysctl', args: string[]): Promise<void> => {
    const result = await runCommand(tool, args, { timeoutMs: 10_000 });
    if (result.code !== 0) {
      // The command names our own values (never the password); the tool's first line says why.
      const shown = args.map((arg, index) => (args[index - 1] === 'pass' ? '***' : arg)).join(' ');
      const reason = (result.stderr || result.stdout).trim().split('\n')[0]?.replace(/[^\x20-\x7e]/g, '').slice(0, 160) ?? '';
      throw conflict(`high availability: ${tool} ${shown} was refused${reason ? `: ${reason}` : ''}`);
    }
  };
  const status = async (): Promise<HaStatus> => {
    const text = await ifconfigAll();
    lastStates = parseCarp(text).states;
    const pfsync = current?.stateSync ? new RegExp(`^${PFSYNC}: flags=[^\\n]*\\bUP\\b[\\s\\S]*?syncdev: ${current.stateSync.syncInterface}\\b`, 'm').test(text) : false;
    return {
      engine: 'carp', running: current !== null && vrrpState() !== null, vrrp_state: vrrpState(),
      state_sync: current?.stateSync ? { running: pfsync, internal_entries: null, external_entries: null, errors: null, last_error: null, bytes_sent: null, bytes_received: null } : null,
      last_error: null,
    };
  };
  return {
    async apply(spec) {
      const present = parseCarp(await ifconfigAll()).addresses;
      if (!spec || spec.addresses.length === 0) {
        for (const stale of present) await run('ifconfig', [stale.interface, stale.address.includes(':') ? 'inet6' : 'inet', stale.address, '-alias']);
        if (current?.stateSync) await run('ifconfig', [PFSYNC, '-syncdev', '-syncpeer', 'down']);
        current = null;
        return status();
      }
      for (const command of carpCommands(spec, present)) await run(command.tool, command.args);
      current = spec;
      return status();
    },
    async adjust(demotion, failingChecks) {
      if (!current) return;
      current = { ...current, demotion, failingChecks };
      const skew = String(advskew(current.role, demotion, failingChecks));
      for (const address of current.addresses) await run('ifconfig', [address.interface, 'vhid', String(address.vhid), 'advskew', skew]);
    },
    status,
    vrrpState,
    async close() {},
  };
}

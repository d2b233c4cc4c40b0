/**
 * Interface, VLAN and static-route changes on FreeBSD with ifconfig(8) and route(8), argument arrays only. An
 * interface change is a list of commands run in order; when one is refused, the ones that ran are undone in
 * reverse (each command knows its inverse) and the change answers 409 with the tool's one-line reason.
 */
import { conflict, unavailable } from '../../core/errors.js';
import { describeMissing, missingTool } from '../debian-packages.js';
import { NOT_RUNNABLE, runCommand, type CommandResult } from '../exec.js';
import type { InterfaceChange, VlanDevice } from '../network.js';

/** What `ifconfig <name>` shows of an interface: every address with its prefix, MTU, state, description. */
export interface IfconfigSnapshot {
  mtu: number;
  up: boolean;
  description: string | null;
  v4: string[];
  v6: string[];
}

export function parseIfconfigSnapshot(text: string): IfconfigSnapshot {
  const head = /flags=\w+<([^>]*)> .*mtu (\d+)/.exec(text);
  const snapshot: IfconfigSnapshot = { mtu: Number(head?.[2] ?? 0), up: (head?.[1] ?? '').split(',').includes('UP'), description: null, v4: [], v6: [] };
  for (const line of text.split('\n').map((l) => l.trim())) {
    let match: RegExpExecArray | null;
    if ((match = /^inet (\S+) netmask 0x([0-9a-f]{8})/.exec(line))) snapshot.v4.push(`${match[1]}/${[...parseInt(match[2], 16).toString(2)].filter((b) => b === '1').length}`);
    else if ((match = /^inet6 (\S+) prefixlen (\d+)/.exec(line)) && !match[1].startsWith('fe80')) snapshot.v6.push(`${match[1]}/${match[2]}`);
    else if ((match = /^description: (.*)$/.exec(line))) snapshot.description = match[1];
  }
  return snapshot;
}

/** One step of a change and the step that undoes it. */
export interface Step {
  args: string[];
  undo: string[];
}

export function interfaceSteps(name: string, from: IfconfigSnapshot, change: InterfaceChange): Step[] {
  const steps: Step[] = [];
  const replace = (family: 'inet' | 'inet6', current: string[], next: string | null) => {
    for (const address of current) if (address !== next) steps.push({ args: [name, family, address, '-alias'], undo: [name, family, address, 'alias'] });
    if (next && !current.includes(next)) steps.push({ args: [name, family, next, 'alias'], undo: [name, family, next, '-alias'] });
  };
  if (change.ipv4_mode === 'static') replace('inet', from.v4, change.ipv4_address ?? null);
  if (change.ipv4_mode === 'none') replace('inet', from.v4, null);
  if (change.ipv6_address !== undefined) replace('inet6', from.v6, change.ipv6_address);
  if (change.mtu !== undefined) steps.push({ args: [name, 'mtu', String(change.mtu)], undo: [name, 'mtu', String(from.mtu)] });
  if (change.description !== undefined) {
    const set = (text: string | null) => (text ? [name, 'description', text] : [name, '-description']);
    steps.push({ args: set(change.description), undo: set(from.description) });
  }
  if (change.enabled !== undefined) steps.push({ args: [name, change.enabled ? 'up' : 'down'], undo: [name, from.up ? 'up' : 'down'] });
  return steps;
}

const reason = (result: CommandResult) => (result.stderr || result.stdout).split('\n').map((l) => l.replace(/[^\x20-\x7e]/g, '').trim()).find(Boolean)?.slice(0, 160) ?? `exited ${result.code}`;

async function tool(file: string, args: string[]): Promise<CommandResult> {
  const result = await runCommand(file, args, { timeoutMs: 15_000 });
  if (result.code === NOT_RUNNABLE && /ENOENT|not found/i.test(result.stderr)) throw unavailable(describeMissing(missingTool(file)));
  return result;
}

export async function configureFreebsdInterface(name: string, change: InterfaceChange): Promise<number> {
  if (change.ipv4_mode === 'dhcp') throw conflict(`interface ${name}: ipv4_mode dhcp is not applied by Bulwark (run dhclient from rc.conf); use static or none`);
  const shown = await tool('ifconfig', [name]);
  if (shown.code !== 0) throw conflict(`interface ${name}: ${reason(shown)}`);
  const steps = interfaceSteps(name, parseIfconfigSnapshot(shown.stdout), change);
  const done: Step[] = [];
  for (const step of steps) {
    const result = await tool('ifconfig', step.args);
    if (result.code !== 0) {
      for (const ran of done.reverse()) await tool('ifconfig', ran.undo);
      throw conflict(`interface ${name}: ifconfig refused the change (${reason(result)}); the previous settings are kept`);
    }
    done.push(step);
  }
  return steps.length;
}

export async function setFreebsdVlan(vlan: VlanDevice, present: boolean): Promise<void> {
  const exists = (await tool('ifconfig', [vlan.device])).code === 0;
  if (exists) {
    const destroyed = await tool('ifconfig', [vlan.device, 'destroy']);
    if (destroyed.code !== 0) throw conflict(`VLAN ${vlan.device} could not be removed: ${reason(destroyed)}`);
  }
  if (!present) return;
  const created = await tool('ifconfig', [vlan.device, 'create', 'vlan', String(vlan.vlan_id), 'vlandev', vlan.parent, 'mtu', String(vlan.mtu), 'up']);
  if (created.code !== 0) throw conflict(`VLAN ${vlan.device} could not be created: ${reason(created)}`);
}

/** route(8) takes no metric; a FIB is `-fib N`, an IPv6 destination `-6`. */
export async function setFreebsdRoute(route: { destination: string; gateway: string; table: number }, present: boolean): Promise<void> {
  const family = route.gateway.includes(':') ? ['-6'] : ['-4'];
  const target = [...family, route.destination, route.gateway];
  if (!present) {
    const removed = await tool('route', ['-n', 'delete', '-fib', String(route.table), ...target]);
    if (removed.code !== 0 && !/not in table/i.test(reason(removed))) throw conflict(`route to ${route.destination} was not withdrawn: ${reason(removed)}`);
    return;
  }
  const added = await tool('route', ['-n', 'add', '-fib', String(route.table), ...target]);
  if (added.code === 0) return;
  // An existing route to the destination is changed in place (what `ip route replace` does on Linux).
  if (!/File exists/i.test(reason(added))) throw conflict(`route to ${route.destination} was not installed: ${reason(added)}`);
  const changed = await tool('route', ['-n', 'change', '-fib', String(route.table), ...target]);
  if (changed.code !== 0) throw conflict(`route to ${route.destination} was not installed: ${reason(changed)}`);
}

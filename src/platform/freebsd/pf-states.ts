/**
 * Cutting the states a block rule entering its window now stops (FreeBSD). `pfctl -s states -v -v` lists each
 * state with the interface, direction and addresses its rule saw (translated addresses in parentheses), its
 * id and, for floating states, the interface it was created on (`origif:`, FreeBSD 14). Each is judged by the
 * whole ruleset before and after the edge (compile/firewall-decision.ts); the ones it turns from allowed to
 * blocked are killed by id (`pfctl -k id -k <id>/<creatorid>`). Killing more would harm: pf creates state
 * only on a TCP SYN (`flags S/SA`), so a flow whose state is gone is decided packet by packet from then on,
 * and under a default-deny rule it is cut. (The dashboard's reading of the same listing, freebsd/traffic.ts,
 * keeps neither the direction nor the state id.)
 */
import { isIP } from 'node:net';
import { runCommand } from '../exec.js';
import type { Crossing, HostAddresses, ScheduleEdge } from '../../compile/schedule-edges.js';

export interface PfState {
  /** `<id>/<creatorid>`, as `pfctl -k id -k` takes it. */
  id: string;
  crossing: Crossing;
}

/** `1.2.3.4:80`, `2001:db8::1[80]` or a bare address (no port). */
function hostOf(text: string): { address: string; port: number } | undefined {
  const v6 = /^(.+)\[(\d+)\]$/.exec(text);
  const v4 = /^([\d.]+):(\d+)$/.exec(text);
  const [address, port] = v6 ? [v6[1], Number(v6[2])] : v4 ? [v4[1], Number(v4[2])] : [text, 0];
  return isIP(address) ? { address, port } : undefined;
}

/**
 * A state line reads `<if> <proto> <a> [(<a'>)] -> <b> [(<b'>)]  <states>` for an outbound state (a = source)
 * and `… <a> [(<a'>)] <- <b> …` for an inbound one (a = destination). The filter saw the addresses outside the
 * parentheses: inbound after rdr, outbound after nat.
 */
export function parsePfStates(text: string): PfState[] {
  const states: PfState[] = [];
  let current: { crossing: Crossing; ifname: string; id?: string; origif?: string } | undefined;
  const finish = () => {
    if (!current?.id) return;
    const iface = current.ifname !== 'all' ? current.ifname : (current.origif ?? null);
    states.push({ id: current.id, crossing: { ...current.crossing, iface } });
  };
  for (const line of text.split('\n')) {
    if (/^\s/.test(line)) {
      const id = /^\s+id: ([0-9a-f]+) creatorid: ([0-9a-f]+)/.exec(line);
      if (id && current) current.id = `${id[1]}/${id[2]}`;
      const origif = /^\s+origif: (\S+)/.exec(line);
      if (origif && current) current.origif = origif[1];
      continue;
    }
    finish();
    current = undefined;
    const words = line.trim().split(/\s+/).filter((word) => !word.startsWith('('));
    const arrow = words.indexOf('->') >= 0 ? words.indexOf('->') : words.indexOf('<-');
    if (arrow !== 3) continue;
    const first = hostOf(words[2]);
    const second = hostOf(words[4] ?? '');
    if (!first || !second) continue;
    const outbound = words[3] === '->';
    const [src, dst] = outbound ? [first, second] : [second, first];
    current = {
      ifname: words[0],
      crossing: { direction: outbound ? 'out' : 'in', iface: null, protocol: words[1], src: src.address, sport: src.port, dst: dst.address, dport: dst.port },
    };
  }
  finish();
  return states;
}

/**
 * Every address of every interface from `ifconfig -a` (`inet A netmask …`, `inet6 A%scope prefixlen …`): pf's
 * `(em0)` and `(self)` mean all of them, aliases included (freebsd/network.ts keeps one per family for display).
 */
export function parseIfconfigAddresses(text: string): Map<string, string[]> {
  const byInterface = new Map<string, string[]>();
  let addresses: string[] | undefined;
  for (const line of text.split('\n')) {
    const header = /^(\S+?): flags=/.exec(line);
    if (header) {
      addresses = [];
      byInterface.set(header[1], addresses);
      continue;
    }
    const inet = /^\s+inet6? ([^\s%]+)/.exec(line);
    if (inet && addresses && isIP(inet[1])) addresses.push(inet[1]);
  }
  return byInterface;
}

/** Kills the states `edge` cuts; answers their ids. */
export async function cutStartedStates(edge: ScheduleEdge, tools: { pfctl: string; ifconfig: string; loopback: string }): Promise<string[]> {
  const listed = await runCommand(tools.pfctl, ['-s', 'states', '-v', '-v']);
  if (listed.code !== 0) return [];
  const addresses = await runCommand(tools.ifconfig, ['-a']);
  const host: HostAddresses = { loopback: tools.loopback, byInterface: addresses.code === 0 ? parseIfconfigAddresses(addresses.stdout) : new Map() };
  const killed: string[] = [];
  for (const state of parsePfStates(listed.stdout)) {
    if (!edge.touches(state.crossing, host) || !edge.cuts(state.crossing, host)) continue;
    await runCommand(tools.pfctl, ['-k', 'id', '-k', state.id]);
    killed.push(state.id);
  }
  return killed;
}

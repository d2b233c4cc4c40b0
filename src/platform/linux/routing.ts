/**
 * Multi-WAN on Linux: the plan of compile-nftables.ts loaded as one nft transaction (table `inet bulwark_mwan`)
 * plus one `ip -batch` per family for the rules in Bulwark's priority range and the gateway tables; flows and
 * migration from conntrack by the label marks; probes in gateway-probes.ts.
 */
import { conflict, unavailable } from '../../core/errors.js';
import { ipBatchLine } from '../../render/system/ip-batch.js';
import { describeMissing, missingTool } from '../debian-packages.js';
import { NOT_RUNNABLE, runCommand, type CommandResult } from '../exec.js';
import { summariseRefusal } from '../tool-refusal.js';
import { parseConntrackLine } from './conntrack.js';
import { probeGateway } from '../gateway-probes.js';
import { ip, ipJson, ipReason } from './ip-tool.js';
import {
  GATEWAY_TABLE_BASE, MAIN_TABLE, MWAN_TABLE, RULE_PRIORITY, ruleWords,
  type FlowState, type IpRuleSpec, type LinuxRoutingPlan, type RoutingCommand, type RoutingControl, type TableRoute,
} from '../routing.js';

interface KernelRule {
  priority: number;
  src?: string;
  srclen?: number;
  iif?: string;
  fwmark?: string;
  fwmask?: string;
  table?: string;
  suppress_prefixlen?: number;
}

interface KernelRoute { dst: string; gateway?: string; dev?: string; table?: string }

const inRange = (rule: KernelRule) => rule.priority >= RULE_PRIORITY.suppress && rule.priority <= RULE_PRIORITY.last;
const tableNumber = (table: string | undefined) => (table === 'main' ? MAIN_TABLE : Number(table));

/** A kernel rule read back as the words that add it again (for putting the previous state back). */
export function kernelRuleSpec(rule: KernelRule): IpRuleSpec {
  const selector: string[] = [];
  if (rule.fwmark) selector.push('fwmark', rule.fwmask && rule.fwmask !== '0xffffffff' ? `${rule.fwmark}/${rule.fwmask}` : rule.fwmark);
  if (rule.iif) selector.push('iif', rule.iif);
  if (rule.src && rule.src !== 'all') selector.push('from', rule.srclen !== undefined ? `${rule.src}/${rule.srclen}` : rule.src);
  return { priority: rule.priority, selector, table: tableNumber(rule.table), ...(rule.suppress_prefixlen !== undefined ? { suffix: ['suppress_prefixlength', String(rule.suppress_prefixlen)] } : {}) };
}

/** What the kernel holds in Bulwark's part of it now: rules in the range and routes of gateway tables. */
async function kernelState(): Promise<{ rules: Record<4 | 6, KernelRule[]>; routes: Record<4 | 6, KernelRoute[]> }> {
  const rules = async (family: 4 | 6) => (await ipJson<KernelRule[]>([`-${family}`, 'rule', 'show'])).filter(inRange);
  const routes = async (family: 4 | 6) => (await ipJson<KernelRoute[]>([`-${family}`, 'route', 'show', 'table', 'all'])).filter((r) => tableNumber(r.table) >= GATEWAY_TABLE_BASE);
  return { rules: { 4: await rules(4), 6: await rules(6) }, routes: { 4: await routes(4), 6: await routes(6) } };
}

const words = (list: string[]) => list.map((value) => ({ value, field: 'routing' }));

/** One family's batch: Bulwark's rules and gateway tables replaced by the wanted ones. */
function familyBatch(family: 4 | 6, now: { rules: KernelRule[]; routes: KernelRoute[] }, wanted: { rules: IpRuleSpec[]; routes: TableRoute[] }): string[] {
  const lines: string[] = [];
  for (const rule of now.rules) lines.push(ipBatchLine(['rule', 'del', 'priority', ...words([String(rule.priority)])]));
  for (const table of new Set(now.routes.map((r) => tableNumber(r.table)))) lines.push(ipBatchLine(['route', 'flush', 'table', ...words([String(table)])]));
  for (const route of wanted.routes.filter((r) => r.family === family)) {
    lines.push(ipBatchLine(['route', 'replace', 'default', 'via', ...words([route.via]), 'dev', ...words([route.dev]), 'table', ...words([String(route.table)])]));
  }
  for (const rule of wanted.rules) lines.push(ipBatchLine(['rule', 'add', ...words(ruleWords(rule))]));
  return lines;
}

/** Source-address rules: traffic from a gateway interface's address (its probes) takes that gateway's table. */
async function sourceRules(plan: LinuxRoutingPlan): Promise<IpRuleSpec[]> {
  const rules: IpRuleSpec[] = [];
  for (const [index, gateway] of plan.gateways.entries()) {
    const [entry] = await ipJson<{ addr_info?: { family: string; local: string; scope?: string }[] }[]>(['addr', 'show', 'dev', gateway.interface]).catch(() => []);
    const address = entry?.addr_info?.find((a) => a.family === (gateway.family === 4 ? 'inet' : 'inet6') && a.scope !== 'link')?.local;
    if (address) rules.push({ priority: RULE_PRIORITY.sources + index, selector: ['from', address], table: gateway.table });
  }
  return rules;
}

const familyOfRule = (rule: IpRuleSpec): 4 | 6 => (rule.selector.some((word) => word.includes(':') && !/^0x/.test(word)) ? 6 : 4);

async function run(file: string, args: string[], input: string): Promise<CommandResult> {
  const result = await runCommand(file, args, { input, timeoutMs: 60_000 });
  if (result.code === NOT_RUNNABLE && /ENOENT|not found/i.test(result.stderr)) throw unavailable(describeMissing(missingTool(file)));
  return result;
}

export function createLinuxRouting(): RoutingControl {
  let applied: LinuxRoutingPlan | undefined;

  async function commandsFor(plan: LinuxRoutingPlan): Promise<RoutingCommand[]> {
    const now = await kernelState();
    const rules = [...plan.rules, ...(await sourceRules(plan))];
    const commands: RoutingCommand[] = [{ command: 'nft -f -', input: plan.nft }];
    for (const family of [4, 6] as const) {
      // Mark rules apply to both families; address rules to their own.
      const familyRules = rules.filter((rule) => rule.selector[0] === 'fwmark' || rule.selector[0] === 'iif' || familyOfRule(rule) === family);
      const lines = familyBatch(family, { rules: now.rules[family], routes: now.routes[family] }, { rules: familyRules, routes: plan.routes });
      if (lines.length) commands.push({ command: `ip -${family} -batch -`, input: `${lines.join('\n')}\n` });
    }
    return commands;
  }

  /** Puts back the table, rules and routes read before an apply. */
  async function restore(previousTable: string | null, previous: Awaited<ReturnType<typeof kernelState>>): Promise<void> {
    const table = previousTable ? `table inet ${MWAN_TABLE} {}\ndelete table inet ${MWAN_TABLE}\n${previousTable}` : `table inet ${MWAN_TABLE} {}\ndelete table inet ${MWAN_TABLE}\n`;
    await run('nft', ['-f', '-'], table);
    const now = await kernelState();
    for (const family of [4, 6] as const) {
      const routes: TableRoute[] = previous.routes[family].filter((r) => r.dst === 'default' && r.gateway && r.dev)
        .map((r) => ({ table: tableNumber(r.table), family, destination: 'default', via: r.gateway!, dev: r.dev! }));
      const lines = familyBatch(family, { rules: now.rules[family], routes: now.routes[family] }, { rules: previous.rules[family].map(kernelRuleSpec), routes });
      if (lines.length) await run('ip', [`-${family}`, '-force', '-batch', '-'], `${lines.join('\n')}\n`);
    }
  }

  return {
    dialect: 'nftables',
    async fibs() {
      // Linux has 2^32 routing tables; instances use the 16-bit FIB numbers of the API.
      return { net_fibs: 65536 };
    },
    async enableFibs() {
      return { already_enabled: true, reboot_scheduled: false, net_fibs: 65536 };
    },
    async pinInterface(name, fib) {
      // Applied at once; the next apply writes the same rule from the stored members.
      const rules = (await ipJson<KernelRule[]>(['rule', 'show'])).filter((r) => r.iif === name && r.priority >= RULE_PRIORITY.members && r.priority <= RULE_PRIORITY.last);
      for (const rule of rules) await ip(['rule', 'del', 'priority', String(rule.priority), 'iif', name]);
      if (fib === 0) return;
      const used = new Set((await ipJson<KernelRule[]>(['rule', 'show'])).map((r) => r.priority));
      let priority: number = RULE_PRIORITY.members;
      while (used.has(priority) && priority < RULE_PRIORITY.last) priority++;
      const added = await ip(['rule', 'add', 'iif', name, 'lookup', String(fib), 'priority', String(priority)]);
      if (added.code !== 0) throw conflict(`interface ${name} could not be pinned to table ${fib}: ${ipReason(added)}`);
    },
    async loadAnchors() {
      throw new Error('the linux platform loads a multi-WAN plan (applyPlan), not pf anchors');
    },
    async anchors(): Promise<Record<string, string>> {
      const listed = await runCommand('nft', ['list', 'table', 'inet', MWAN_TABLE]);
      return listed.code === 0 ? { [`inet ${MWAN_TABLE}`]: listed.stdout } : {};
    },
    commandsFor,
    async applyPlan(plan) {
      const listed = await runCommand('nft', ['list', 'table', 'inet', MWAN_TABLE]);
      if (listed.code === NOT_RUNNABLE) throw unavailable(describeMissing(missingTool('nft')));
      const previousTable = listed.code === 0 ? listed.stdout : null;
      // A gateway on an interface the kernel does not have is refused before anything is touched (the batch
      // would fail half-way, and traffic would pause until the previous routing is put back).
      const links = new Set((await ipJson<{ ifname: string }[]>(['link', 'show'])).map((link) => link.ifname));
      const absent = [...new Set(plan.gateways.map((g) => g.interface).filter((name) => !links.has(name)))];
      if (absent.length) throw conflict(`multi-WAN apply refused: no interface ${absent.join(', ')} for a gateway; nothing was changed`);
      const previous = await kernelState();
      const [nft, ...batches] = await commandsFor(plan);
      const loaded = await run('nft', ['-f', '-'], nft.input);
      if (loaded.code !== 0) {
        const { message } = summariseRefusal('nft', loaded.stderr || loaded.stdout, nft.input);
        throw conflict(`multi-WAN apply refused: ${message}; the previous routing stays in force`);
      }
      for (const batch of batches) {
        const family = batch.command.includes('-6') ? '-6' : '-4';
        const result = await run('ip', [family, '-batch', '-'], batch.input);
        if (result.code !== 0) {
          await restore(previousTable, previous);
          throw conflict(`multi-WAN apply refused by the kernel (${ipReason(result)}); the previous routing is put back`);
        }
      }
      applied = plan;
    },
    async probe(target) {
      return probeGateway(target);
    },
    async flows(limit) {
      const listed = await runCommand('conntrack', ['-L', '-o', 'extended,id'], { timeoutMs: 20_000 });
      if (listed.code === NOT_RUNNABLE) throw unavailable(describeMissing(missingTool('conntrack')));
      const byMark = new Map(Object.entries(applied?.labels ?? {}).map(([label, entry]) => [entry.mark, { label, table: entry.table }]));
      const gatewayOf = new Map((applied?.gateways ?? []).map((g) => [g.table, g.interface]));
      const flows: FlowState[] = [];
      for (const line of listed.stdout.split('\n')) {
        if (flows.length >= limit) break;
        const flow = parseConntrackLine(line);
        if (!flow) continue;
        const mark = Number(/ mark=(\d+)/.exec(line)?.[1] ?? 0);
        const labelled = byMark.get(mark);
        const port = (address: string, value: number) => (value ? (address.includes(':') ? `[${address}]:${value}` : `${address}:${value}`) : address);
        flows.push({
          id: flow.id, protocol: flow.protocol, src: port(flow.src_addr, flow.src_port), dst: port(flow.dst_addr, flow.dst_port),
          iface: labelled ? (gatewayOf.get(labelled.table) ?? null) : null,
          rtable: labelled && labelled.table >= 0 ? labelled.table : null,
          bytes: flow.bytes_in + flow.bytes_out, packets: flow.packets_in + flow.packets_out, age_secs: flow.age_secs,
          state: flow.state || null, label: labelled?.label ?? null,
        });
      }
      return flows;
    },
    async killStates(label) {
      const entry = applied?.labels[label];
      if (!entry) return 0;
      const result = await runCommand('conntrack', ['-D', '--mark', String(entry.mark)]);
      if (result.code === NOT_RUNNABLE) throw unavailable(describeMissing(missingTool('conntrack')));
      return Number(/(\d+) flow entr/.exec(`${result.stderr}${result.stdout}`)?.[1] ?? 0);
    },
  };
}

/**
 * Gateway probes (Linux, and FreeBSD where its ping differs), each leaving from the gateway's interface so its source-address rule sends it
 * through that gateway: ICMP with the `ping` binary (iputils: no raw socket in Bulwark), TCP connect, HTTP(S)
 * through the outbound guard, DNS with `dig`.
 * `ping` and `dig` run as the unprivileged probe account (probe-account.ts), every value in their argument
 * vectors held to probe-arguments.ts, and operands after `--` (ping) or behind their option (`dig -q`, `@`).
 * TCP, HTTP and DNS probes connect through the outbound guard: a special address is refused unless the target's
 * allow_list (the administrator's outbound allow-list and the gateway's next hop) names it.
 */
import { connect } from 'node:net';
import { isIP } from 'node:net';
import { unavailable } from '../core/errors.js';
import { outboundFetch } from '../net/outbound.js';
import { resolveGuardedHost } from '../net/guarded-host.js';
import { describeMissing, missingTool } from './debian-packages.js';
import { NOT_RUNNABLE, runCommand } from './exec.js';
import { runUnprivileged } from './probe-account.js';
import { probeFieldProblem } from './probe-arguments.js';
import type { ProbeResult, ProbeTarget } from './routing.js';
import { ipJson } from './linux/ip-tool.js';

/** ping and dig take whole seconds (the reference rounds up, at least 1). */
const wholeSeconds = (ms: number) => String(Math.max(1, Math.ceil(ms / 1000)));
const failed = (error: string): ProbeResult => ({ success: false, rtt_ms: null, error: error.replace(/[^\x20-\x7e]/g, ' ').trim().slice(0, 200) });

/** The interface's first address of the target's family (the probe's source). */
async function sourceAddress(iface: string, family: 4 | 6): Promise<string | null> {
  const [entry] = await ipJson<{ addr_info?: { family: string; local: string; scope?: string }[] }[]>(['addr', 'show', 'dev', iface]).catch(() => []);
  return entry?.addr_info?.find((a) => a.family === (family === 4 ? 'inet' : 'inet6') && a.scope !== 'link')?.local ?? null;
}

async function icmp(target: ProbeTarget, os: 'linux' | 'freebsd'): Promise<ProbeResult> {
  // iputils: -W timeout, -I interface; FreeBSD: -t timeout, -S source address.
  const via = os === 'linux' ? ['-W', wholeSeconds(target.timeout_ms), '-I', target.interface] : ['-t', wholeSeconds(target.timeout_ms), ...(await freebsdSource(target))];
  const result = await runUnprivileged('ping', ['-n', '-q', '-c', '1', ...via, '--', target.target], { timeoutMs: target.timeout_ms + 2000 });
  if (result.code === NOT_RUNNABLE) throw unavailable(describeMissing(missingTool('ping')));
  // -q: "rtt min/avg/max/mdev = 0.052/0.052/0.052/0.000 ms"
  const rtt = /= [\d.]+\/([\d.]+)\//.exec(result.stdout);
  if (result.code === 0 && rtt) return { success: true, rtt_ms: Number(rtt[1]), error: null };
  return failed(result.code === 1 ? `no reply from ${target.target} within ${wholeSeconds(target.timeout_ms)} s` : result.stderr || `ping exited ${result.code}`);
}

function tcp(target: ProbeTarget, address: string, localAddress: string | undefined): Promise<ProbeResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ host: address, port: target.port ?? 443, localAddress, timeout: target.timeout_ms });
    const done = (result: ProbeResult) => {
      socket.destroy();
      resolve(result);
    };
    socket.once('connect', () => done({ success: true, rtt_ms: Math.round((performance.now() - started) * 1000) / 1000, error: null }));
    socket.once('timeout', () => done(failed(`no TCP answer from ${target.target}:${target.port ?? 443} within ${target.timeout_ms} ms`)));
    socket.once('error', (error) => done(failed(error.message)));
  });
}

async function http(target: ProbeTarget, localAddress: string | undefined): Promise<ProbeResult> {
  const url = /^https?:\/\//.test(target.target) ? target.target : `http://${isIP(target.target) === 6 ? `[${target.target}]` : target.target}${target.port ? `:${target.port}` : ''}/`;
  // monitor_expect: the status wanted (default 200; 0 = any 200-399).
  const expected = Number(target.expect ?? 200);
  const started = performance.now();
  try {
    const response = await outboundFetch(url, { method: 'GET' }, { allowList: target.allow_list ?? [], allowHttp: true, timeoutMs: target.timeout_ms, localAddress, maxRedirects: 0 });
    await response.body?.cancel();
    const ok = expected === 0 ? response.status >= 200 && response.status < 400 : response.status === expected;
    const rtt = Math.round((performance.now() - started) * 1000) / 1000;
    return ok ? { success: true, rtt_ms: rtt, error: null } : failed(`HTTP ${response.status}, expected ${expected === 0 ? '200-399' : expected}`);
  } catch (error) {
    return failed((error as Error).message);
  }
}

async function dns(target: ProbeTarget, address: string, localAddress: string | undefined): Promise<ProbeResult> {
  const name = target.expect ?? 'example.com';
  // -r: no ~/.digrc; the name after -q and the type after -t are never read as options.
  const args = ['-r', `@${address}`, ...(target.port ? ['-p', String(target.port)] : []), ...(localAddress ? ['-b', localAddress] : []), `+time=${wholeSeconds(target.timeout_ms)}`, '+tries=1', '-q', name, '-t', 'A'];
  const result = await runUnprivileged('dig', args, { timeoutMs: target.timeout_ms + 2000 });
  if (result.code === NOT_RUNNABLE) throw unavailable(describeMissing(missingTool('dig')));
  const status = /status: ([A-Z]+)/.exec(result.stdout)?.[1];
  const time = /Query time: (\d+) msec/.exec(result.stdout)?.[1];
  if (result.code === 0 && (status === 'NOERROR' || status === 'NXDOMAIN') && time !== undefined) return { success: true, rtt_ms: Number(time), error: null };
  return failed(status ? `DNS answered ${status}` : `no DNS answer from ${target.target} within ${wholeSeconds(target.timeout_ms)} s`);
}

/** FreeBSD's ping binds no interface: the source address of the gateway's interface (from ifconfig) instead. */
async function freebsdSource(target: ProbeTarget): Promise<string[]> {
  const shown = await runCommand('ifconfig', [target.interface]);
  const address = /^\s*inet (\S+) netmask/m.exec(shown.stdout)?.[1];
  return address ? ['-S', address] : [];
}

export async function probeGateway(target: ProbeTarget, os: 'linux' | 'freebsd' = 'linux'): Promise<ProbeResult> {
  if (!target.target) return failed('no probe target');
  const problem = probeFieldProblem({ kind: target.kind, target: target.target, expect: target.expect, interface: target.interface });
  if (problem) return failed(`probe refused: ${problem.field} ${problem.message}`);
  if (target.kind === 'icmp' || !['tcp', 'http', 'dns'].includes(target.kind)) return icmp(target, os);
  const family = isIP(target.target) === 6 ? 6 : 4;
  const localAddress = os === 'linux' ? ((await sourceAddress(target.interface, family)) ?? undefined) : (await freebsdSource(target))[1];
  if (target.kind === 'http') return http(target, localAddress);
  // TCP and DNS: the host resolved once and checked, then connected to the checked address (no second lookup).
  let address: string;
  try {
    ({ address } = await resolveGuardedHost(target.target, target.allow_list ?? []));
  } catch (error) {
    return failed((error as Error).message);
  }
  return target.kind === 'tcp' ? tcp(target, address, localAddress) : dns(target, address, localAddress);
}

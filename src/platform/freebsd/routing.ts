/**
 * Policy routing on FreeBSD: FIBs from `sysctl net.fibs`, interfaces pinned with `ifconfig <if> fib <n>`, the
 * pf anchors (bulwark-pbr, bulwark-mwan-reply, bulwark-mwan-leak) loaded whole with `pfctl -a <anchor> -f -`,
 * states cut by label with `pfctl -k label -k <label>`; probes as on Linux (ping's timeout flag differs).
 * Adding FIBs needs /boot/loader.conf and a reboot, which Bulwark leaves to the administrator (503 says so).
 */
import { conflict, unavailable } from '../../core/errors.js';
import { runCommand } from '../exec.js';
import { summariseRefusal } from '../tool-refusal.js';
import { probeGateway } from '../gateway-probes.js';
import type { RoutingControl } from '../routing.js';

const reason = (text: string) => text.split('\n').map((l) => l.replace(/[^\x20-\x7e]/g, '').trim()).find(Boolean)?.slice(0, 160) ?? '';

export function createFreebsdRouting(anchorsLoaded = new Set<string>()): RoutingControl {
  return {
    dialect: 'pf',
    async commandsFor() {
      throw new Error('the freebsd platform loads pf anchors, not a Linux plan');
    },
    async applyPlan() {
      throw new Error('the freebsd platform loads pf anchors, not a Linux plan');
    },
    async fibs() {
      const result = await runCommand('sysctl', ['-n', 'net.fibs']);
      return { net_fibs: result.code === 0 ? Math.max(1, Number(result.stdout.trim()) || 1) : 1 };
    },
    async enableFibs() {
      throw unavailable('more FIBs on FreeBSD need net.fibs in /boot/loader.conf and a reboot: set it there and reboot');
    },
    async pinInterface(name, fib) {
      const result = await runCommand('ifconfig', [name, 'fib', String(fib)]);
      if (result.code !== 0) throw conflict(`interface ${name} could not be pinned to FIB ${fib}: ${reason(result.stderr)}`);
    },
    async loadAnchors(anchors) {
      for (const [anchor, text] of Object.entries(anchors)) {
        const result = await runCommand('pfctl', ['-a', anchor, '-f', '-'], { input: text });
        if (result.code !== 0) throw conflict(`pf anchor ${anchor} refused: ${summariseRefusal('pfctl', result.stderr, text).message}`);
        anchorsLoaded.add(anchor);
      }
    },
    async anchors() {
      const out: Record<string, string> = {};
      for (const anchor of anchorsLoaded) {
        const result = await runCommand('pfctl', ['-a', anchor, '-s', 'rules']);
        if (result.code === 0) out[anchor] = result.stdout;
      }
      return out;
    },
    probe: (target) => probeGateway(target, 'freebsd'),
    async flows() {
      // pf's state listing names neither the rule label nor the FIB of a state; cutting by label works (below).
      throw unavailable('multi-WAN flows are not listed on freebsd: pfctl -s states names no rule label or FIB');
    },
    async killStates(label) {
      const result = await runCommand('pfctl', ['-k', 'label', '-k', label]);
      if (result.code !== 0) throw conflict(`states of ${label} not killed: ${reason(result.stderr)}`);
      return Number(/killed (\d+) states/.exec(`${result.stderr}${result.stdout}`)?.[1] ?? 0);
    },
  };
}

import type { BlockedPacket, ConnectionTable, Flow, InterfaceCounters, RuleCounter, TrafficSource } from '../connections.js';

/** A 32-bit integer hash (Wang-style mix): the model is a pure function of (slot, generation, time). */
function mix(...values: number[]): number {
  let h = 0x9e3779b9;
  for (const v of values) {
    h = Math.imul(h ^ (v >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

const SERVICES = [443, 443, 443, 80, 53, 22, 123, 993, 8080, 3478];
// Documentation ranges (RFC 5737) for the far side, a private LAN for the near side: clearly not real hosts.
const FAR_NETS = ['192.0.2.', '198.51.100.', '203.0.113.'];

/**
 * The simulated platform's deterministic synthetic traffic model: `slots` long-lived flow slots, each cycling
 * through flows of its own lifetime and rate, so the table churns (adds, updates, removes) like a real one.
 * Every figure is a pure function of the wall-clock second, so two reads at the same second agree.
 */
export class SimulatedTraffic implements TrafficSource {
  readonly simulated = true;
  readonly slots: number;
  private readonly now: () => number;
  /** Interface counters count from here, like a host's counters count from boot. */
  private readonly bootSeconds: number;

  constructor(options: { slots?: number; now?: () => number } = {}) {
    this.slots = options.slots ?? 300;
    this.now = options.now ?? Date.now;
    this.bootSeconds = Math.floor(this.now() / 1000) - 3600;
  }

  flowsAt(seconds: number): Flow[] {
    const flows: Flow[] = new Array(this.slots);
    for (let slot = 0; slot < this.slots; slot++) {
      const lifetime = 20 + (mix(slot, 1) % 600);
      const offset = mix(slot, 2) % lifetime;
      const generation = Math.floor((seconds + offset) / lifetime);
      const age = seconds + offset - generation * lifetime;
      const h = mix(slot, generation);
      const kind = h % 20;
      const protocol = kind < 14 ? 'tcp' : kind < 19 ? 'udp' : 'icmp';
      const rateOut = 40 * (1 << (h >>> 8) % 12);
      const rateIn = rateOut * (1 + ((h >>> 4) % 8));
      // flows talk in bursts: active `duty` seconds out of every `period`, idle (unchanged) otherwise
      const period = 4 + ((h >>> 5) % 12);
      const duty = 1 + ((h >>> 9) % 3);
      const active = Math.floor(age / period) * duty + Math.min(age % period, duty);
      const bytesOut = rateOut * (active + 1);
      const bytesIn = rateIn * active;
      flows[slot] = {
        id: slot * 1_000_003 + generation,
        protocol,
        src_addr: `10.10.${(h >>> 12) % 4}.${2 + ((h >>> 16) % 250)}`,
        src_port: protocol === 'icmp' ? 0 : 49152 + ((h >>> 3) % 16000),
        dst_addr: `${FAR_NETS[h % 3]}${1 + ((h >>> 20) % 254)}`,
        dst_port: protocol === 'icmp' ? 0 : protocol === 'udp' ? [53, 123, 3478][h % 3] : SERVICES[(h >>> 24) % SERVICES.length],
        state: protocol === 'tcp' ? (age >= lifetime - 2 ? 'TIME_WAIT' : age < 1 ? 'SYN_SENT' : 'ESTABLISHED') : age < 1 ? 'NEW' : 'ASSURED',
        packets_in: Math.ceil(bytesIn / 900),
        packets_out: Math.ceil(bytesOut / 600),
        bytes_in: bytesIn,
        bytes_out: bytesOut,
        age_secs: age,
      };
    }
    return flows;
  }

  async connections(): Promise<ConnectionTable> {
    const flows = this.flowsAt(Math.floor(this.now() / 1000));
    return { flows, total: flows.length };
  }

  /** Smoothly varying rates integrated in closed form, so counters only ever grow. */
  async interfaces(): Promise<InterfaceCounters[]> {
    const t = this.now() / 1000 - this.bootSeconds;
    const integral = (rate: number, period: number) => Math.floor(rate * (t - 0.3 * period * Math.cos(t / period)) + 0.3 * rate * period);
    const iface = (name: string, rateIn: number, rateOut: number, period: number) => ({
      name,
      bytes_in: integral(rateIn, period),
      bytes_out: integral(rateOut, period),
      packets_in: integral(rateIn / 900, period),
      packets_out: integral(rateOut / 600, period),
    });
    return [iface('lo', 2_000, 2_000, 30), iface('wan0', 1_200_000, 180_000, 60), iface('lan0', 190_000, 1_150_000, 60)];
  }

  async ruleCounters(): Promise<RuleCounter[]> {
    return [];
  }

  /** One synthetic drop every 5 s, the last 1000 kept. */
  async blocked(limit: number): Promise<BlockedPacket[]> {
    const last = Math.floor(this.now() / 5000);
    const out: BlockedPacket[] = [];
    for (let k = last; k > last - Math.min(limit, 1000) && k >= 0; k--) {
      const h = mix(k, 7);
      const protocol = h % 4 === 0 ? 'udp' : 'tcp';
      out.push({
        timestamp: new Date(k * 5000).toISOString().replace('Z', '000Z'),
        action: 'block', direction: 'in', interface: 'wan0', protocol,
        src_addr: `${FAR_NETS[(h >>> 2) % 3]}${1 + ((h >>> 8) % 254)}`, src_port: 1024 + ((h >>> 4) % 60000),
        dst_addr: '10.10.0.1', dst_port: [22, 23, 445, 3389, 5900][(h >>> 16) % 5], reason: 'policy', rule_id: null,
      });
    }
    return out;
  }

  async open(): Promise<void> {}

  blockedLogStatus() {
    return { running: true, source: 'simulated: synthetic blocked packets' };
  }

  async close(): Promise<void> {}
}

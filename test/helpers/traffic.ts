import { createSimulatedPlatform } from '../../src/platform/simulated/index.js';
import type { Platform } from '../../src/platform/platform.js';
import type { BlockedPacket, ConnectionTable, Flow, TrafficSource } from '../../src/platform/connections.js';

/** A traffic source that replays the state tables a test sets, one table at a time. */
export class ReplayTraffic implements TrafficSource {
  readonly simulated = true;
  table: ConnectionTable = { flows: [], total: 0 };
  blockedPackets: BlockedPacket[] = [];
  reads = 0;

  set(flows: Flow[], total = flows.length): void {
    this.table = { flows, total };
  }
  async connections() {
    this.reads++;
    return this.table;
  }
  async interfaces() {
    return [{ name: 'wan0', bytes_in: 1000 * this.reads, bytes_out: 500 * this.reads, packets_in: 10 * this.reads, packets_out: 5 * this.reads }];
  }
  async ruleCounters() {
    return [];
  }
  async blocked(limit: number) {
    return this.blockedPackets.slice(0, limit);
  }
  async open() {}
  blockedLogStatus() {
    return { running: true, source: 'replay' };
  }
  async close() {}
}

export function replayPlatform(traffic = new ReplayTraffic()): Platform & { traffic: ReplayTraffic } {
  return { ...createSimulatedPlatform(), traffic };
}

/** A flow with the given index; `bytes` decides its rank. */
export function flow(index: number, bytes: number, extra: Partial<Flow> = {}): Flow {
  return {
    id: index, protocol: index % 5 === 0 ? 'udp' : 'tcp', src_addr: `10.0.${index >> 8 & 255}.${index & 255}`, src_port: 40000 + (index % 20000),
    dst_addr: `192.0.2.${index % 250}`, dst_port: 443, state: 'ESTABLISHED', packets_in: 1, packets_out: 1,
    bytes_in: bytes, bytes_out: 0, age_secs: 1, ...extra,
  };
}

import type { Flow } from '../platform/connections.js';

/** Flows in a dashboard frame (the spec's cap). */
export const FRAME_FLOW_LIMIT = 500;

/** `proto|src:port|dst:port` — the key of connections_delta entries (IPv6 addresses unbracketed). */
export const flowKey = (flow: Pick<Flow, 'protocol' | 'src_addr' | 'src_port' | 'dst_addr' | 'dst_port'>): string =>
  `${flow.protocol}|${flow.src_addr}:${flow.src_port}|${flow.dst_addr}:${flow.dst_port}`;

const volume = (flow: Flow) => flow.bytes_in + flow.bytes_out;

/** Heavier first; equal volumes by id so the selection is stable from tick to tick. */
const heavier = (a: Flow, b: Flow) => volume(b) - volume(a) || a.id - b.id;

/**
 * The `limit` heaviest flows, heaviest first, in O(n log limit): a bounded min-heap keeps the current top
 * while one pass walks the table (100,000 states cost a few milliseconds, never a full sort).
 */
export function topFlows(flows: readonly Flow[], limit = FRAME_FLOW_LIMIT): Flow[] {
  if (flows.length <= limit) return [...flows].sort(heavier);
  const heap: Flow[] = [];
  // heap[0] is the lightest of the kept flows
  const lighter = (i: number, j: number) => heavier(heap[i], heap[j]) > 0;
  const siftUp = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!lighter(i, parent)) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  };
  const siftDown = (i: number) => {
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < heap.length && lighter(left, least)) least = left;
      if (right < heap.length && lighter(right, least)) least = right;
      if (least === i) return;
      [heap[i], heap[least]] = [heap[least], heap[i]];
      i = least;
    }
  };
  for (const flow of flows) {
    if (heap.length < limit) {
      heap.push(flow);
      siftUp(heap.length - 1);
    } else if (heavier(flow, heap[0]) < 0) {
      heap[0] = flow;
      siftDown(0);
    }
  }
  return heap.sort(heavier);
}

/** The frame's view of one flow (wire-format A1 §5.1 connection entry). */
export const frameEntry = (flow: Flow) => ({
  protocol: flow.protocol,
  src_addr: flow.src_addr,
  src_port: flow.src_port,
  dst_addr: flow.dst_addr,
  dst_port: flow.dst_port,
  state: flow.state,
  bytes_in: flow.bytes_in,
  bytes_out: flow.bytes_out,
});

export interface ConnectionsJson {
  /** JSON of the full `connections` array. */
  full: string;
  /** JSON of `{add, update, remove}` against the previous tick, or null when it is not smaller than `full`. */
  delta: string | null;
  counts: { add: number; update: number; remove: number };
}

/**
 * Remembers the previous tick's top flows (key → entry JSON) and produces, per tick, the full array and the
 * delta against the previous tick. Each entry is serialised once; both variants are joined from those strings.
 */
export class ConnectionsDiffer {
  private previous = new Map<string, string>();

  next(top: readonly Flow[]): ConnectionsJson {
    const current = new Map<string, string>();
    const add: string[] = [];
    const update: string[] = [];
    for (const flow of top) {
      const key = flowKey(flow);
      const json = JSON.stringify(frameEntry(flow));
      current.set(key, json);
      const before = this.previous.get(key);
      if (before === undefined) add.push(json);
      else if (before !== json) update.push(json);
    }
    const remove: string[] = [];
    for (const key of this.previous.keys()) if (!current.has(key)) remove.push(JSON.stringify(key));
    this.previous = current;
    const full = `[${[...current.values()].join(',')}]`;
    const delta = `{"add":[${add.join(',')}],"update":[${update.join(',')}],"remove":[${remove.join(',')}]}`;
    return { full, delta: delta.length < full.length ? delta : null, counts: { add: add.length, update: update.length, remove: remove.length } };
  }
}

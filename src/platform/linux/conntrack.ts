import type { Flow } from '../connections.js';

/**
 * Parses `conntrack -L -o extended,id,ktimestamp` text. A line holds the original tuple (src, dst, sport,
 * dport, packets, bytes) then the reply tuple with the same keys; `packets`/`bytes` appear only with
 * nf_conntrack_acct=1 and `delta-time` (age in seconds) only with nf_conntrack_timestamp=1.
 * bytes_out/packets_out count the initiator's direction, bytes_in/packets_in the replies.
 * Hand-scanned rather than split and matched: 100,000 states must parse in well under a tick.
 */
export function parseConntrack(text: string): Flow[] {
  const flows: Flow[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const flow = parseLine(text, start, end);
    if (flow) flows.push(flow);
    start = end + 1;
  }
  return flows;
}

export function parseConntrackLine(line: string): Flow | null {
  return parseLine(line, 0, line.length);
}

const SPACE = 32;
const isUpper = (code: number) => (code >= 65 && code <= 90) || code === 95;

function parseLine(text: string, from: number, to: number): Flow | null {
  const flow: Flow = {
    id: 0, protocol: '', src_addr: '', src_port: 0, dst_addr: '', dst_port: 0, state: '',
    packets_in: 0, packets_out: 0, bytes_in: 0, bytes_out: 0, age_secs: 0,
  };
  let column = 0;
  let tuple = 0; // 1 in the original tuple, 2 in the reply
  let i = from;
  while (i < to) {
    while (i < to && text.charCodeAt(i) === SPACE) i++;
    if (i >= to) break;
    let end = text.indexOf(' ', i);
    if (end === -1 || end > to) end = to;
    if (column === 0) {
      const family = text.slice(i, end);
      if (family !== 'ipv4' && family !== 'ipv6') return null;
    } else if (column === 2) flow.protocol = text.slice(i, end);
    else if (column >= 5) {
      const eq = text.indexOf('=', i);
      if (eq > i && eq < end) {
        const key = text.slice(i, eq);
        const value = text.slice(eq + 1, end);
        if (key === 'src') tuple++;
        const original = tuple <= 1;
        switch (key) {
          case 'src': if (original) flow.src_addr = value; break;
          case 'dst': if (original) flow.dst_addr = value; break;
          case 'sport': if (original) flow.src_port = +value; break;
          case 'dport': if (original) flow.dst_port = +value; break;
          case 'packets': if (original) flow.packets_out = +value; else flow.packets_in = +value; break;
          case 'bytes': if (original) flow.bytes_out = +value; else flow.bytes_in = +value; break;
          case 'delta-time': flow.age_secs = +value; break;
          case 'id': flow.id = +value; break;
        }
      } else if (column === 5 && isUpper(text.charCodeAt(i))) {
        flow.state = text.slice(i, end); // TCP/SCTP/DCCP state after the timeout
      } else if (!flow.state && end - i === 11 && text.startsWith('[UNREPLIED]', i)) {
        flow.state = 'UNREPLIED';
      }
    }
    column++;
    i = end + 1;
  }
  if (column < 6 || !flow.src_addr || !flow.dst_addr) return null;
  if (!flow.state) flow.state = flow.packets_in > 0 ? 'ASSURED' : 'NEW';
  return flow;
}

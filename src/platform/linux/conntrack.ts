import type { Flow } from '../connections.js';

/**
 * Parses `conntrack -L -o extended,id,ktimestamp` text. A line holds the original tuple (src, dst, sport,
 * dport, packets, bytes) then the reply tuple with the same keys; `packets`/`bytes` appear only with
 * nf_conntrack_acct=1 and `delta-time` (age in seconds) only with nf_conntrack_timestamp=1.
 * bytes_out/packets_out count the initiator's direction, bytes_in/packets_in the replies.
 */
export function parseConntrack(text: string): Flow[] {
  const flows: Flow[] = [];
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    const flow = parseConntrackLine(text.slice(start, end));
    if (flow) flows.push(flow);
    start = end + 1;
  }
  return flows;
}

export function parseConntrackLine(line: string): Flow | null {
  const words = line.trim().split(/\s+/);
  if (words.length < 6 || (words[0] !== 'ipv4' && words[0] !== 'ipv6')) return null;
  const flow: Flow = {
    id: 0, protocol: words[2], src_addr: '', src_port: 0, dst_addr: '', dst_port: 0, state: '',
    packets_in: 0, packets_out: 0, bytes_in: 0, bytes_out: 0, age_secs: 0,
  };
  // words[4] is the remaining timeout; a bare upper-case word after it is the TCP/SCTP/DCCP state
  if (words[5] && /^[A-Z_]+$/.test(words[5])) flow.state = words[5];
  let tuple = 0; // 0 before the original tuple's src, 1 in the original, 2 in the reply
  for (let i = 5; i < words.length; i++) {
    const word = words[i];
    if (word === '[UNREPLIED]' && !flow.state) flow.state = 'UNREPLIED';
    const eq = word.indexOf('=');
    if (eq <= 0) continue;
    const key = word.slice(0, eq);
    const value = word.slice(eq + 1);
    if (key === 'src') tuple++;
    const original = tuple <= 1;
    switch (key) {
      case 'src': if (original) flow.src_addr = value; break;
      case 'dst': if (original) flow.dst_addr = value; break;
      case 'sport': if (original) flow.src_port = Number(value); break;
      case 'dport': if (original) flow.dst_port = Number(value); break;
      case 'packets': if (original) flow.packets_out = Number(value); else flow.packets_in = Number(value); break;
      case 'bytes': if (original) flow.bytes_out = Number(value); else flow.bytes_in = Number(value); break;
      case 'delta-time': flow.age_secs = Number(value); break;
      case 'id': flow.id = Number(value); break;
    }
  }
  if (!flow.src_addr || !flow.dst_addr) return null;
  if (!flow.state) flow.state = flow.packets_in > 0 ? 'ASSURED' : 'NEW';
  return flow;
}

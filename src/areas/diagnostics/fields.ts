/**
 * The grammar of every diagnostics value that reaches an argument vector, and the argument vectors themselves:
 * a field that does not fit is a 400 naming it, so no request value can become an option of ping, traceroute,
 * dig or tcpdump (which also get `--` before operands, or the value behind its own option), and the capture
 * filter is built from fields, never taken as an expression.
 */
import { isIP } from 'node:net';
import { badRequest } from '../../core/errors.js';
import { isHostName, isHostOrAddress, isInterfaceName } from '../../render/grammar.js';

const refuse = (field: string, message: string) => badRequest(`body.${field}: ${message}`);

export function checkHost(field: string, value: string): string {
  if (!isHostOrAddress(value)) throw refuse(field, 'must be a host name or an IP address');
  return value;
}

export function checkInterface(value: string): string {
  if (!isInterfaceName(value)) throw refuse('interface', 'must be an interface name (letters, digits, _ . : -, not starting with -)');
  return value;
}


export function pingArguments(body: { host: string; count: number; interface?: string }): string[] {
  const host = checkHost('host', body.host);
  const via = body.interface !== undefined ? ['-I', checkInterface(body.interface)] : [];
  return ['-n', '-c', String(body.count), '-W', '2', ...via, '--', host];
}

export function tracerouteArguments(body: { host: string; max_hops: number }): string[] {
  // UDP probes (traceroute's default) need no raw socket; one probe a hop, 2 s each.
  return ['-n', '-q', '1', '-w', '2', '-m', String(body.max_hops), '--', checkHost('host', body.host)];
}

export function digArguments(body: { name: string; type: string; server?: string; port?: number }): string[] {
  const server = body.server !== undefined ? [`@${checkHost('server', body.server)}`] : [];
  if (body.port !== undefined) server.push('-p', String(body.port));
  // -r: no ~/.digrc; the name behind -q / -x and the type behind -t are never read as options.
  const common = ['-r', ...server, '+time=2', '+tries=2'];
  if (body.type === 'PTR') {
    if (isIP(body.name) === 0) throw refuse('name', 'must be an IP address for a PTR lookup');
    return [...common, '-x', body.name];
  }
  const name = body.name.endsWith('.') ? body.name.slice(0, -1) : body.name;
  if (!isHostName(name) && !/^_[A-Za-z0-9-]+\._(tcp|udp)\.[A-Za-z0-9.-]+$/.test(name)) throw refuse('name', 'must be a DNS name');
  return [...common, '-q', body.name, '-t', body.type];
}

/** The capture filter, built word by word from the fields (tcpdump joins the words after `--`). */
export function captureFilter(body: { protocol: string; host?: string; port?: number }): string[] {
  const words: string[][] = [];
  if (body.protocol !== 'any') words.push([body.protocol]);
  if (body.host !== undefined) {
    if (isIP(body.host) === 0) throw refuse('host', 'must be an IP address');
    words.push(['host', body.host]);
  }
  if (body.port !== undefined) {
    if (!['any', 'tcp', 'udp'].includes(body.protocol)) throw refuse('port', `a port filter needs protocol tcp, udp or any, not ${body.protocol}`);
    words.push(['port', String(body.port)]);
  }
  return words.flatMap((word, index) => (index === 0 ? word : ['and', ...word]));
}


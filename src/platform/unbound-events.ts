/**
 * Query and block events read from Unbound's own log (its stderr, which the supervisor reads): the query log
 * (`log-queries: yes`) and the lines Bulwark's blocklist filter writes for each block. Only lines of exactly
 * these shapes become events; the fields are checked, so nothing else Unbound prints reaches a client as one.
 */
import { isIP } from 'node:net';

export interface DnsQueryEvent {
  type: 'query';
  data: { ts: number; client: string; qname: string; qtype: string };
}

export interface DnsBlockEvent {
  type: 'block';
  data: { ts: number; client: string | null; qname: string; qtype: string; action: string; zone: string };
}

export type UnboundEvent = DnsQueryEvent | DnsBlockEvent;

/** `[1700000000] unbound[123:0] info: ` */
const PREFIX = /^\[(\d+)\] unbound\[\d+:\d+\] info: (.*)$/;
/** A DNS name as Unbound prints it (`dname_str` turns anything unusual into `?`). */
const NAME = /^[A-Za-z0-9_*?.-]{1,255}$/;
const TYPE = /^[A-Z0-9]{1,16}$/;
const ZONE = /^[a-z0-9-]{1,140}$/;
const ACTION = /^(nxdomain|nodata|drop|redirect)$/;

const withoutDot = (name: string) => (name.length > 1 && name.endsWith('.') ? name.slice(0, -1) : name);

/** The event a log line describes, or null when it is not a query or block line. */
export function parseUnboundEvent(line: string): UnboundEvent | null {
  const prefixed = PREFIX.exec(line.trim());
  if (!prefixed) return null;
  const ts = Number(prefixed[1]) * 1000;
  const fields = prefixed[2].split(' ');
  if (fields[0] === 'bulwark-block' && fields.length === 6) {
    const [, zone, action, client, qname, qtype] = fields;
    if (!ZONE.test(zone) || !ACTION.test(action) || !NAME.test(qname) || !TYPE.test(qtype)) return null;
    return { type: 'block', data: { ts, client: isIP(client) ? client : null, qname: withoutDot(qname), qtype, action, zone } };
  }
  // log-queries: "<client> <name>. <type> <class>"
  if (fields.length === 4 && isIP(fields[0]) && NAME.test(fields[1]) && TYPE.test(fields[2]) && TYPE.test(fields[3])) {
    return { type: 'query', data: { ts, client: fields[0], qname: withoutDot(fields[1]), qtype: fields[2] } };
  }
  return null;
}

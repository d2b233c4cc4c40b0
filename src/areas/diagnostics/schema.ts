/**
 * The diagnostics' request bodies. Types, ranges and choices are checked here; the grammar of each value that
 * reaches a tool's argument vector (host, name, interface) is checked again by fields.ts, which names the field.
 */
import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';

const Host = Type.String({ minLength: 1, maxLength: 253, description: 'A host name or an IP address (never an option: no leading -)' });
const Interface = Type.String({ minLength: 1, maxLength: 32, description: 'An interface of the box' });

export const PingBody = Type.Object({
  host: Host,
  count: Type.Integer({ minimum: 1, maximum: 20, default: 4, description: 'Echo requests, one a second' }),
  interface: Type.Optional(Interface),
}, { additionalProperties: false });

export const TracerouteBody = Type.Object({
  host: Host,
  max_hops: Type.Integer({ minimum: 1, maximum: 30, default: 20 }),
}, { additionalProperties: false });

export const DNS_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'PTR', 'SOA', 'SRV', 'TXT', 'CAA'] as const;
export const DnsBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 254, description: 'The name to look up; for PTR, an IP address' }),
  type: StringEnum([...DNS_TYPES], { default: 'A' }),
  server: Type.Optional(Type.String({ minLength: 1, maxLength: 253, description: 'A name server to ask; absent: the box\'s own resolver (/etc/resolv.conf)' })),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'The name server\'s port (53 when absent)' })),
}, { additionalProperties: false });

export const TcpBody = Type.Object({
  host: Host,
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  timeout_s: Type.Integer({ minimum: 1, maximum: 10, default: 5 }),
}, { additionalProperties: false });

export const CAPTURE_PROTOCOLS = ['any', 'tcp', 'udp', 'icmp', 'icmp6', 'arp'] as const;
export const MAX_CAPTURE_BYTES = 10 * 1024 * 1024;
export const CaptureBody = Type.Object({
  interface: Interface,
  protocol: StringEnum([...CAPTURE_PROTOCOLS], { default: 'any', description: 'Only this protocol; any: all' }),
  host: Type.Optional(Type.String({ minLength: 1, maxLength: 45, description: 'Only packets from or to this IP address' })),
  port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: 'Only packets from or to this port (tcp or udp)' })),
  duration_s: Type.Integer({ minimum: 1, maximum: 60, default: 10 }),
  max_bytes: Type.Integer({ minimum: 1024, maximum: MAX_CAPTURE_BYTES, default: 1024 * 1024, description: 'Size cap of the pcap file; the capture ends when the next packet would exceed it' }),
  max_packets: Type.Integer({ minimum: 1, maximum: 100_000, default: 10_000 }),
}, { additionalProperties: false });

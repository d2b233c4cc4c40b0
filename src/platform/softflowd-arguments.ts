/**
 * The one function that renders flow-export values into softflowd's argument vector. softflowd takes no
 * configuration file: every value is an argument, so each must be exactly the token it claims to be — an
 * interface name never taken for an option, a collector an address literal and a port, timeouts and the
 * sampling rate plain integers. A value that does not fit is refused (RenderRefusal → 409), never passed on.
 */
import { isIP } from 'node:net';
import { RenderRefusal } from '../render/refusal.js';
import { isInterfaceName } from '../render/grammar.js';
import type { FlowExportSpec } from './flow-export.js';

/** The capture ring: the default drops packets of a burst at veth/10G rates (measured: 164 of 783 lost at 16 MB in 10 ms). */
export const CAPTURE_BUFFER_BYTES = 16 * 1024 * 1024;

const isCount = (value: number, min: number, max: number) => Number.isInteger(value) && value >= min && value <= max;

/** `address:port`, IPv6 in brackets, for softflowd's `-n`. */
export function collectorToken(address: string, port: number, field: string): string {
  const family = isIP(address);
  if (family === 0) throw new RenderRefusal(field, 'is not an IP address literal');
  if (!isCount(port, 1, 65535)) throw new RenderRefusal(field, 'has no port between 1 and 65535');
  return family === 6 ? `[${address}]:${port}` : `${address}:${port}`;
}

/** softflowd's arguments (foreground) for one interface; `files` are the pid file and control socket paths Bulwark chose. */
export function softflowdArguments(spec: FlowExportSpec, iface: { name: string; ifindex: number }, files: { pidFile: string; controlSocket: string }): string[] {
  if (!isInterfaceName(iface.name)) throw new RenderRefusal('interfaces', 'holds a value that is not an interface name');
  if (!isCount(iface.ifindex, 1, 2 ** 31 - 1)) throw new RenderRefusal('interfaces', `${iface.name} has no interface index`);
  if (spec.collectors.length === 0) throw new RenderRefusal('collectors', 'is empty');
  const collectors = spec.collectors.map((c, index) => collectorToken(c.address, c.port, `collectors.${index}`)).join(',');
  if (!isCount(spec.activeTimeoutSecs, 1, 604_800)) throw new RenderRefusal('active_timeout_secs', 'is not a whole number of seconds');
  if (!isCount(spec.inactiveTimeoutSecs, 1, 604_800)) throw new RenderRefusal('inactive_timeout_secs', 'is not a whole number of seconds');
  if (!isCount(spec.sampling, 1, 65_535)) throw new RenderRefusal('sampling', 'is not a rate between 1 and 65535');
  for (const [field, path] of Object.entries(files)) {
    if (!/^\/[A-Za-z0-9._/-]+$/.test(path) || path.includes('/..')) throw new RenderRefusal(field, 'is not a clean absolute path');
  }
  const version = spec.protocol === 'ipfix' ? '10' : spec.protocol === 'netflow9' ? '9' : null;
  if (version === null) throw new RenderRefusal('protocol', 'is neither netflow9 nor ipfix');
  const idle = spec.inactiveTimeoutSecs;
  // Every idle timeout softflowd knows is the inactive timeout (a closed TCP flow goes sooner when that is shorter).
  const timeouts = [
    `maxlife=${spec.activeTimeoutSecs}`, `general=${idle}`, `tcp=${idle}`, `udp=${idle}`, `icmp=${idle}`,
    `tcp.rst=${Math.min(idle, 120)}`, `tcp.fin=${Math.min(idle, 300)}`, `expint=${Math.min(idle, 60)}`,
  ].flatMap((timeout) => ['-t', timeout]);
  return [
    '-d', // foreground, under Bulwark's supervision
    '-N', // no promiscuous mode: the box's own forwarded traffic is what is counted
    '-B', String(CAPTURE_BUFFER_BYTES),
    '-i', `${iface.ifindex}:${iface.name}`,
    '-n', collectors,
    '-v', version,
    '-A', 'milli',
    '-6', // IPv6 flows too
    ...timeouts,
    ...(spec.sampling > 1 ? ['-s', String(spec.sampling)] : []),
    '-p', files.pidFile,
    '-c', files.controlSocket,
  ];
}

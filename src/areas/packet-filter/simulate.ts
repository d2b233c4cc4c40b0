/**
 * POST /rules/simulate: the request and answer schemas, and the step from a request to the pure simulator
 * (compile/packet-simulation.ts) over the applied (default) or the stored configuration.
 */
import { Type, type Static } from 'typebox';
import type { AppContext } from '../../context.js';
import { badRequest, HttpError } from '../../core/errors.js';
import { parseIp } from '../../compile/addresses.js';
import { CompileError } from '../../compile/firewall-model.js';
import type { HostAddresses } from '../../compile/firewall-decision.js';
import { simulatePacket, type SimulationResult } from '../../compile/packet-simulation.js';
import { NFT_LOOPBACK } from '../../compile/nftables.js';
import { PF_LOOPBACK } from '../../compile/pf.js';
import { Nullable, Port } from '../../compile/firewall-schemas.js';
import { StringEnum } from '../../model/schema-helpers.js';
import { normaliseInterface } from './values.js';
import type { PacketFilterService } from './service.js';

export const SimulateBody = Type.Object({
  interface: Type.String({ minLength: 1, description: 'the interface the packet crosses' }),
  direction: StringEnum(['in', 'out'], { description: '`in`: entering the firewall by the interface; `out`: leaving by it' }),
  protocol: StringEnum(['tcp', 'udp', 'icmp', 'icmp6', 'esp', 'ah', 'gre']),
  src: Type.String({ description: 'source address (one IPv4 or IPv6 address)' }),
  dst: Type.String({ description: 'destination address, of the same family' }),
  src_port: Type.Optional(Nullable(Port())),
  dst_port: Type.Optional(Nullable(Port())),
  at: Type.Optional(Type.String({ format: 'date-time', description: 'when (RFC 3339): schedules are judged at the appliance\'s local time of this instant; default now' })),
  ruleset: Type.Optional(StringEnum(['applied', 'stored'], { description: '`applied` (default): what the kernel enforces; `stored`: the configuration with its pending changes' })),
}, { additionalProperties: false });
export type SimulateRequest = Static<typeof SimulateBody>;

const Endpoints = Type.Object({ src: Type.String(), src_port: Nullable(Type.Integer()), dst: Type.String(), dst_port: Nullable(Type.Integer()) });
const Action = StringEnum(['pass', 'block', 'blockdrop', 'blockreturn']);

export const SimulateAnswer = Type.Object({
  verdict: StringEnum(['pass', 'block']),
  action: Action,
  decided_by: Type.Union([
    Type.Object({ type: Type.Literal('rule'), rule_id: Type.String(), quick: Type.Boolean() }),
    Type.Object({ type: Type.Literal('system'), rule: StringEnum(['loopback', 'anti-lockout']) }),
    Type.Object({ type: Type.Literal('default'), policy: StringEnum(['pass', 'block'], { description: 'block: the packet enters a WAN interface and the WAN default block is on (GET /rules/wan-default-block)' }) }),
  ]),
  ruleset: StringEnum(['applied', 'stored']),
  at: Type.String(),
  local_time: Type.String({ description: 'weekday and HH:MM the schedules were judged at' }),
  nat: Nullable(Type.Object({ rule_id: Type.String(), nat_type: Type.String(), before: Endpoints, after: Endpoints, changed: Type.Array(Type.String()) })),
  filtered: Endpoints,
  rules: Type.Array(Type.Object({
    rule_id: Type.String(),
    priority: Type.Integer(),
    action: Action,
    quick: Type.Boolean(),
    outcome: StringEnum(['decides', 'matched_overridden', 'not_matched', 'not_loaded', 'not_reached']),
    reason: Type.String(),
    matched_on: Type.Optional(Type.Array(Type.String())),
  })),
});

/** Checks the fields across each other; each 400 names the field to change. */
function checkPacket(body: SimulateRequest): void {
  normaliseInterface(body.interface);
  const src = parseIp(body.src);
  if (!src) throw badRequest(`body.src: "${body.src}" is not an IPv4 or IPv6 address`);
  const dst = parseIp(body.dst);
  if (!dst) throw badRequest(`body.dst: "${body.dst}" is not an IPv4 or IPv6 address`);
  if (src.family !== dst.family) throw badRequest(`body.dst: IPv${dst.family} destination with an IPv${src.family} source`);
  if (body.protocol === 'icmp' && src.family === 6) throw badRequest('body.protocol: icmp is IPv4; use icmp6 for IPv6');
  if (body.protocol === 'icmp6' && src.family === 4) throw badRequest('body.protocol: icmp6 is IPv6; use icmp for IPv4');
  const ported = body.protocol === 'tcp' || body.protocol === 'udp';
  for (const field of ['src_port', 'dst_port'] as const) {
    const value = body[field];
    if (ported && (value === undefined || value === null)) throw badRequest(`body.${field} is required for protocol ${body.protocol}`);
    if (!ported && value !== undefined && value !== null) throw badRequest(`body.${field}: protocol ${body.protocol} has no ports`);
  }
}

/** The firewall's own addresses by interface, as the platform reports them. */
export async function hostAddresses(context: AppContext): Promise<HostAddresses> {
  const interfaces = await context.platform.network.interfaces().catch(() => []);
  const byInterface = new Map(interfaces.map((i) => [i.name, [i.ipv4, i.ipv6].filter((a): a is string => !!a)]));
  return { loopback: context.platform.packetFilter.dialect === 'pf' ? PF_LOOPBACK : NFT_LOOPBACK, byInterface };
}

export async function simulateRequest(context: AppContext, pf: PacketFilterService, body: SimulateRequest): Promise<SimulationResult & { ruleset: string; at: string }> {
  checkPacket(body);
  const atMs = body.at === undefined ? context.clock.now() : Date.parse(body.at);
  if (Number.isNaN(atMs)) throw badRequest(`body.at: "${body.at}" is not an RFC 3339 date-time`);
  const ruleset = body.ruleset ?? 'applied';
  let snapshot = pf.storedSnapshot();
  if (ruleset === 'applied') {
    const applied = pf.applied.read();
    if (applied.appliedAt === null) throw new HttpError(409, 'nothing has been applied yet: POST /api/v1/reload first, or simulate the stored configuration with "ruleset": "stored"');
    snapshot = applied.snapshot;
  }
  const config = pf.configFor(snapshot, atMs);
  const host = await hostAddresses(context);
  const packet = { ...body, src_port: body.src_port ?? null, dst_port: body.dst_port ?? null };
  try {
    return { ...simulatePacket(config, packet, host), ruleset, at: new Date(atMs).toISOString() };
  } catch (error) {
    if (error instanceof CompileError) throw new HttpError(409, `the ${ruleset} configuration does not compile: ${error.message}`);
    throw error;
  }
}

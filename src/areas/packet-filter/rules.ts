/** The /rules collection: wire-format.md §3.2, full validation, priority order kept in the store's positions. */
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';
import { badRequest } from '../../core/errors.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { ModelRegistry } from '../../model/registry.js';
import { StringEnum, Uuid } from '../../model/schema-helpers.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import type { RuleData, StateOptions } from '../../compile/firewall-types.js';
import { INTERFACE_ADDRESS } from '../../compile/firewall-model.js';
import { parsePortInput } from '../../model/port-input.js';
import { OptionalNullable, OptionalPortInput, Port, RuleSchema, StateOptionsSchema, StatusSchema, TRACKING_VALUES } from '../../compile/firewall-schemas.js';
import { ACTION_INPUTS, addressFamily, normaliseAction, normaliseAddress, normaliseDescription, normaliseInterface, normaliseLabel, normaliseProtocol, portRange, portsAllowed, SentFields } from './values.js';
import { addressAliasChecks } from './aliases.js';

export const RULE_KIND = 'rule';
export const DEFAULT_PRIORITY = 100;

/** rule_match as a request may send it: any field, ports in any form of common/port-input.ts. */
const RuleMatchRequest = Type.Object({
  src_addr: Type.Optional(Type.String()),
  src_port: OptionalPortInput(),
  dst_addr: Type.Optional(Type.String()),
  dst_port: OptionalPortInput(),
}, { additionalProperties: false });

/** The request: flat fields as the reference's clients send them, or the nested record read back. */
function requestSchema(create: boolean) {
  const properties = {
    action: Type.String({ description: `one of ${ACTION_INPUTS.join(', ')}` }),
    direction: StringEnum(['in', 'out', 'any']),
    protocol: Type.String({ description: 'tcp, udp, icmp, icmp6, tcp/udp (also tcpudp, tcp+udp), esp, ah, gre, any' }),
    src_addr: Type.Optional(Type.String()),
    dst_addr: Type.Optional(Type.String()),
    src_port_start: OptionalNullable(Port()),
    src_port_end: OptionalNullable(Port()),
    dst_port_start: OptionalNullable(Port()),
    dst_port_end: OptionalNullable(Port()),
    interface: OptionalNullable(Type.String()),
    priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 10000 })),
    ip_version: Type.Optional(StringEnum(['inet', 'inet6', 'both'])),
    src_invert: Type.Optional(Type.Boolean()),
    dst_invert: Type.Optional(Type.Boolean()),
    log: Type.Optional(Type.Boolean()),
    quick: Type.Optional(Type.Boolean()),
    label: OptionalNullable(Type.String()),
    description: OptionalNullable(Type.String()),
    gateway: OptionalNullable(Type.String()),
    state_tracking: Type.Optional(StringEnum(TRACKING_VALUES)),
    state_options: Type.Optional(Type.Partial(StateOptionsSchema)),
    rule_match: Type.Optional(RuleMatchRequest),
    status: Type.Optional(StatusSchema),
    schedule_id: OptionalNullable(Uuid()),
    id: Type.Optional(Type.String()),
    created_at: Type.Optional(Type.String()),
    updated_at: Type.Optional(Type.String()),
    // What reads and writes answer besides the record (hit counters, a write's warnings): echoed back, ignored.
    hits: Type.Optional(Type.Unknown()),
    last_hit_at: Type.Optional(Type.Unknown()),
    warnings: Type.Optional(Type.Unknown()),
  };
  return Type.Object(properties, { required: create ? ['action', 'direction', 'protocol'] : [], additionalProperties: false });
}

/** The body POST /rules takes (the third-party importer validates with it too). */
export const RuleCreateBody = requestSchema(true);
export const RuleUpdateBody = requestSchema(false);

const DEFAULT_STATE: StateOptions = { tracking: 'keep_state', policy: null, adaptive_timeouts: null, timeout_tcp: null, timeout_udp: null, timeout_icmp: null };

function defaults(priority: number): RuleData {
  return {
    priority, action: 'pass', direction: 'any', ip_version: 'both', interface: null, protocol: 'any',
    rule_match: { src_addr: 'any', src_port: null, dst_addr: 'any', dst_port: null },
    src_invert: false, dst_invert: false, log: false, quick: true, label: null, description: null, gateway: null,
    state_options: { ...DEFAULT_STATE }, status: 'active', schedule_id: null,
  };
}

const has = (body: Record<string, unknown>, key: string) => Object.prototype.hasOwnProperty.call(body, key);

/** A new rule without a priority goes last: after every rule, and never before the default 100. */
function nextPriority(rules: readonly ConfigObject[]): number {
  let highest = DEFAULT_PRIORITY;
  for (const rule of rules) highest = Math.max(highest, (rule.data as unknown as RuleData).priority);
  return highest;
}

export function toStoredRule(body: Record<string, unknown>, existing: ConfigObject | undefined, rules: readonly ConfigObject[]): ConfigData {
  const base: RuleData = existing ? structuredClone(existing.data as unknown as RuleData) : defaults(nextPriority(rules));
  const rule = base;
  if (has(body, 'action')) rule.action = normaliseAction(body.action as string);
  if (has(body, 'direction')) rule.direction = body.direction as RuleData['direction'];
  if (has(body, 'protocol')) rule.protocol = normaliseProtocol(body.protocol as string);
  if (has(body, 'priority')) rule.priority = body.priority as number;
  if (has(body, 'ip_version')) rule.ip_version = body.ip_version as RuleData['ip_version'];
  if (has(body, 'interface')) rule.interface = normaliseInterface(body.interface as string | null);
  for (const flag of ['src_invert', 'dst_invert', 'log', 'quick'] as const) if (has(body, flag)) rule[flag] = body[flag] as boolean;
  if (has(body, 'label')) rule.label = normaliseLabel(body.label as string | null);
  if (has(body, 'description')) rule.description = normaliseDescription(body.description as string | null);
  if (has(body, 'gateway')) {
    const gateway = body.gateway as string | null;
    // Policy routing belongs to multi-WAN; accepting a gateway here and not routing by it would mislead.
    if (gateway !== null && gateway !== '') throw badRequest('body.gateway is not supported on rules; route by policy with /multiwan/policies');
    rule.gateway = null;
  }
  if (has(body, 'status')) rule.status = body.status as RuleData['status'];
  if (has(body, 'schedule_id')) rule.schedule_id = (body.schedule_id as string | null) || null;

  // Matching: the nested record form first, the flat request fields win. `sent` remembers which field set
  // each value, so a refusal below names the field the client wrote.
  const sent = new SentFields();
  const match = (body.rule_match ?? {}) as Record<string, unknown>;
  for (const side of ['src_addr', 'dst_addr'] as const) {
    if (match[side] !== undefined) rule.rule_match[side] = normaliseAddress(match[side] as string, sent.set(side, `rule_match.${side}`));
    if (has(body, side)) rule.rule_match[side] = normaliseAddress(body[side] as string, sent.set(side, side));
  }
  for (const side of ['src_port', 'dst_port'] as const) {
    if (match[side] !== undefined) rule.rule_match[side] = parsePortInput(match[side], `body.${sent.set(side, `rule_match.${side}`)}`);
    if (has(body, `${side}_start`) || has(body, `${side}_end`)) {
      sent.set(side, has(body, `${side}_start`) ? `${side}_start` : `${side}_end`);
      rule.rule_match[side] = portRange(body[`${side}_start`] as number | null, body[`${side}_end`] as number | null, side);
    }
  }

  if (body.state_options) rule.state_options = { ...rule.state_options, ...(body.state_options as Partial<StateOptions>) };
  if (has(body, 'state_tracking')) rule.state_options.tracking = body.state_tracking as StateOptions['tracking'];
  checkRule(rule, sent);
  return rule as unknown as ConfigData;
}

/** Invariants across fields; each error names the field a client should change, as the client spelled it. */
function checkRule(rule: RuleData, sent: SentFields): void {
  const m = rule.rule_match;
  const ported = (['dst_port', 'src_port'] as const).filter((side) => m[side] !== null);
  if (ported.length > 0 && !portsAllowed(rule.protocol)) {
    const named = ported.find((side) => sent.has(side));
    if (named) throw badRequest(`body.${sent.name(named)}: ports need protocol tcp, udp or tcp/udp (protocol is ${rule.protocol})`);
    // The ports were stored before; the protocol sent now is what cannot carry them.
    throw badRequest(`body.protocol: ${rule.protocol} cannot match ports and the rule has rule_match.${ported[0]}; clear it (null) or use tcp, udp or tcp/udp`);
  }
  for (const side of ['src_addr', 'dst_addr'] as const) {
    if (m[side] === INTERFACE_ADDRESS && !rule.interface) throw badRequest(`body.${side}: "${INTERFACE_ADDRESS}" is an address of the rule's interface; set body.interface`);
  }
  if (rule.src_invert && m.src_addr === 'any') throw badRequest('body.src_invert: "not any" matches nothing; give a source address');
  if (rule.dst_invert && m.dst_addr === 'any') throw badRequest('body.dst_invert: "not any" matches nothing; give a destination address');
  const src = addressFamily(m.src_addr);
  const dst = addressFamily(m.dst_addr);
  if (src && dst && src !== dst) {
    const blamed = sent.has('dst_addr') || !sent.has('src_addr') ? 'dst_addr' : 'src_addr';
    throw badRequest(`body.${sent.name(blamed)}: IPv${dst} destination with an IPv${src} source`);
  }
  const family = src ?? dst;
  if (family && rule.ip_version !== 'both' && (rule.ip_version === 'inet' ? 4 : 6) !== family) {
    throw badRequest(`body.ip_version: ${rule.ip_version} does not match the IPv${family} address`);
  }
  if (rule.protocol === 'icmp' && (rule.ip_version === 'inet6' || family === 6)) throw badRequest('body.protocol: icmp is IPv4; use icmp6 for IPv6');
  if (rule.protocol === 'icmp6' && (rule.ip_version === 'inet' || family === 4)) throw badRequest('body.protocol: icmp6 is IPv6; use icmp for IPv4');
  const adaptive = rule.state_options.adaptive_timeouts;
  // The kernel reads a per-rule adaptive.start of 0 as "not set" and uses the global values instead.
  if (adaptive && adaptive.start === 0) throw badRequest('body.state_options.adaptive_timeouts.start must be at least 1 (0 would mean the global values)');
  if (adaptive && adaptive.start >= adaptive.end) throw badRequest('body.state_options.adaptive_timeouts.start must be less than end');
  if (rule.action !== 'pass' && rule.state_options.tracking !== 'keep_state' && rule.state_options.tracking !== 'none') {
    throw badRequest('body.state_tracking: state options apply to pass rules only');
  }
  if (rule.state_options.tracking === 'synproxy_state' && rule.protocol !== 'tcp') throw badRequest('body.state_tracking: synproxy_state needs protocol tcp');
}

/** Keeps the store's positions in evaluation order: priority ascending, earlier position first among equals. */
export function sortRulesByPriority(context: AppContext): void {
  const rules = context.store.list(RULE_KIND);
  const sorted = [...rules].sort((a, b) => (a.data.priority as number) - (b.data.priority as number) || a.position - b.position);
  if (sorted.some((rule, index) => rule !== rules[index])) context.store.reorder(RULE_KIND, sorted.map((r) => r.id));
}

/** The rule model; its create and update are served from the flat request form (see RuleCreateBody, toStoredRule). */
export function declareRules(models: ModelRegistry): CollectionModel {
  const aliases = addressAliasChecks((data) => data.rule_match as RuleData['rule_match']);
  return models.collection({
    kind: RULE_KIND, noun: 'rule', writeAccess: 'rules:write',
    schema: RuleSchema,
    references: [...aliases.references, { field: 'schedule_id', kind: 'schedule' }],
    validate: (data, ctx) => aliases.check(data, ctx.store),
  });
}

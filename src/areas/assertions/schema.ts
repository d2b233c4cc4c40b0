/**
 * The /assertions collection: what must stay true of the network. `transit`: a packet entering an interface from
 * a source to a destination (protocol, port), judged by the packet simulator; `probe`: something the box checks
 * itself (TCP connect, ICMP, DNS lookup, HTTP GET) from one of its interfaces. Each expects `pass` or `block`.
 */
import { Type, type Static } from 'typebox';
import { badRequest } from '../../core/errors.js';
import { parseCidr, parseIp } from '../../compile/addresses.js';
import { Nullable, OptionalNullable, Port } from '../../compile/firewall-schemas.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { ModelRegistry } from '../../model/registry.js';
import { StringEnum } from '../../model/schema-helpers.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { normaliseDescription, normaliseInterface } from '../packet-filter/values.js';

export const ASSERTION_KIND = 'assertion';
/** Names appear in 409 answers, events and audit entries: a plain grammar, no quotes or line breaks. */
const ASSERTION_NAME = /^[\p{L}\p{N}][\p{L}\p{N} _.,:+/()@-]{0,79}$/u;
/** An alias reference as rules write it. */
const ALIAS_REFERENCE = /^<([A-Za-z0-9_]{1,31})>$/;
/** A DNS name (probe target or DNS question): letters, digits, hyphens and dots only, never a leading '-'. */
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62})(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,62}))*\.?$/;

export const TRANSIT_PROTOCOLS = ['tcp', 'udp', 'icmp', 'icmp6'] as const;
export const PROBE_KINDS = ['tcp', 'icmp', 'dns', 'http'] as const;
export const PROBE_TIMEOUT_MS = { min: 100, max: 10_000, default: 2000 } as const;

export const AssertionSchema = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 80 }),
  description: Nullable(Type.String({ maxLength: 1024 })),
  kind: StringEnum(['transit', 'probe']),
  enabled: Type.Boolean(),
  expect: StringEnum(['pass', 'block'], { description: '`pass`: the packet passes (the probe succeeds); `block`: it is blocked (the probe fails)' }),
  interface: Nullable(Type.String({ description: 'transit: the interface the packet enters by, a name or a role (lan, wan)' })),
  egress_interface: Nullable(Type.String({ description: 'transit: the interface it leaves by, a name or a role; default: the interface whose network holds the destination' })),
  protocol: Nullable(StringEnum(TRANSIT_PROTOCOLS)),
  source: Nullable(Type.String({ description: 'transit: an address, a CIDR or an alias (<name>)' })),
  destination: Nullable(Type.String({ description: 'transit: an address, a CIDR or an alias (<name>); probe: see target' })),
  port: Nullable(Port()),
  probe: Nullable(StringEnum(PROBE_KINDS)),
  target: Nullable(Type.String({ description: 'probe: an address or a host name (http: also a URL)' })),
  query: Nullable(Type.String({ description: 'probe dns: the name asked (default example.com); http: the status wanted (default 200, 0 = any 200-399)' })),
  source_interface: Nullable(Type.String({ description: 'probe: the interface (name or role) or one of the box\'s addresses it leaves from' })),
  timeout_ms: Type.Integer({ minimum: PROBE_TIMEOUT_MS.min, maximum: PROBE_TIMEOUT_MS.max }),
  interval_seconds: Type.Integer({ minimum: 5, maximum: 86_400, description: 'probe: how often the continuous check runs it' }),
});
export type AssertionData = Static<typeof AssertionSchema>;

function requestSchema(create: boolean) {
  return Type.Object({
    name: Type.String({ minLength: 1, maxLength: 80 }),
    description: OptionalNullable(Type.String({ maxLength: 1024 })),
    kind: StringEnum(['transit', 'probe']),
    enabled: Type.Optional(Type.Boolean()),
    expect: Type.Optional(StringEnum(['pass', 'block'])),
    interface: OptionalNullable(Type.String({ maxLength: 64 })),
    egress_interface: OptionalNullable(Type.String({ maxLength: 64 })),
    protocol: OptionalNullable(StringEnum(TRANSIT_PROTOCOLS)),
    source: OptionalNullable(Type.String({ maxLength: 64 })),
    destination: OptionalNullable(Type.String({ maxLength: 64 })),
    port: OptionalNullable(Port()),
    probe: OptionalNullable(StringEnum(PROBE_KINDS)),
    target: OptionalNullable(Type.String({ maxLength: 512 })),
    query: OptionalNullable(Type.String({ maxLength: 253 })),
    source_interface: OptionalNullable(Type.String({ maxLength: 64 })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: PROBE_TIMEOUT_MS.min, maximum: PROBE_TIMEOUT_MS.max })),
    interval_seconds: Type.Optional(Type.Integer({ minimum: 5, maximum: 86_400 })),
    id: Type.Optional(Type.String()),
    created_at: Type.Optional(Type.String()),
    updated_at: Type.Optional(Type.String()),
    // What reads answer besides the record: echoed back, ignored.
    last_result: Type.Optional(Type.Unknown()),
  }, { required: create ? ['name', 'kind'] : [], additionalProperties: false });
}

export const AssertionCreateBody = requestSchema(true);
export const AssertionUpdateBody = requestSchema(false);

/** An address, a CIDR or `<alias>`; the alias must exist when the assertion is judged (else it cannot hold). */
function normaliseEndpoint(value: string | null, field: string): string {
  if (value === null || value === '') throw badRequest(`body.${field} is required for a transit assertion: an address, a CIDR or <alias>`);
  const text = value.trim();
  if (ALIAS_REFERENCE.test(text) || parseIp(text) || parseCidr(text)) return text;
  throw badRequest(`body.${field}: "${value}" is not an address, a CIDR or <alias>`);
}

/** An interface name or a role name (both fit the interface-name grammar). */
const normaliseInterfaceOrRole = (value: string | null, field: string) => normaliseInterface(value, field);

function normaliseProbeTarget(kind: AssertionData['probe'], value: string | null): string {
  if (value === null || value.trim() === '') throw badRequest('body.target is required for a probe assertion');
  const text = value.trim();
  if (kind === 'http' && /^https?:\/\//.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw badRequest(`body.target: "${value}" is not a URL`);
    }
    if (url.username || url.password) throw badRequest('body.target: a probe URL carries no credentials');
    return url.toString();
  }
  if (parseIp(text) || HOST_NAME.test(text)) return text;
  throw badRequest(`body.target: "${value}" is not an address or a host name${kind === 'http' ? ' (or an http(s) URL)' : ''}`);
}

export function toStoredAssertion(body: Record<string, unknown>, existing?: ConfigObject): ConfigData {
  const a: AssertionData = existing
    ? { ...(existing.data as unknown as AssertionData) }
    : {
      name: '', description: null, kind: 'transit', enabled: true, expect: 'pass', interface: null, egress_interface: null, protocol: null,
      source: null, destination: null, port: null, probe: null, target: null, query: null, source_interface: null,
      timeout_ms: PROBE_TIMEOUT_MS.default, interval_seconds: 60,
    };
  for (const field of ['kind', 'enabled', 'expect', 'interface', 'egress_interface', 'protocol', 'source', 'destination', 'port', 'probe', 'target', 'query', 'source_interface', 'timeout_ms', 'interval_seconds'] as const) {
    if (body[field] !== undefined) (a as Record<string, unknown>)[field] = body[field];
  }
  if (body.name !== undefined) a.name = (body.name as string).trim();
  if (!ASSERTION_NAME.test(a.name)) throw badRequest('body.name must be 1-80 characters: letters, digits, spaces and _ . , : + / ( ) @ -, starting with a letter or digit');
  if (body.description !== undefined) a.description = normaliseDescription(body.description as string | null);
  if (a.kind === 'transit') {
    a.interface = normaliseInterfaceOrRole(a.interface, 'interface');
    if (a.interface === null) throw badRequest('body.interface is required for a transit assertion: the interface (or role) the packet enters by');
    a.egress_interface = normaliseInterfaceOrRole(a.egress_interface, 'egress_interface');
    if (a.protocol === null) throw badRequest(`body.protocol is required for a transit assertion: one of ${TRANSIT_PROTOCOLS.join(', ')}`);
    a.source = normaliseEndpoint(a.source, 'source');
    a.destination = normaliseEndpoint(a.destination, 'destination');
    const ported = a.protocol === 'tcp' || a.protocol === 'udp';
    if (ported && a.port === null) throw badRequest(`body.port is required for protocol ${a.protocol}`);
    if (!ported) a.port = null;
    a.probe = null;
    a.target = null;
    a.query = null;
    a.source_interface = null;
  } else {
    if (a.probe === null) throw badRequest(`body.probe is required for a probe assertion: one of ${PROBE_KINDS.join(', ')}`);
    a.target = normaliseProbeTarget(a.probe, a.target);
    if (a.probe === 'tcp' && a.port === null) throw badRequest('body.port is required for a tcp probe');
    if (a.probe === 'icmp') a.port = null;
    if (a.query !== null && a.query !== '') {
      if (a.probe === 'dns' && !HOST_NAME.test(a.query)) throw badRequest(`body.query: "${a.query}" is not a DNS name`);
      if (a.probe === 'http' && !/^\d{1,3}$/.test(a.query)) throw badRequest('body.query: the HTTP status wanted, e.g. 200 (0: any 200-399)');
      if (a.probe === 'tcp' || a.probe === 'icmp') throw badRequest(`body.query: a ${a.probe} probe asks no question`);
    } else a.query = null;
    if (a.source_interface === null || a.source_interface === '') throw badRequest('body.source_interface is required for a probe assertion: the interface (name or role) or address it leaves from');
    if (!parseIp(a.source_interface)) a.source_interface = normaliseInterfaceOrRole(a.source_interface, 'source_interface');
    a.interface = null;
    a.egress_interface = null;
    a.protocol = null;
    a.source = null;
    a.destination = null;
  }
  return a as unknown as ConfigData;
}

export function declareAssertions(models: ModelRegistry): CollectionModel {
  return models.collection({
    kind: ASSERTION_KIND, noun: 'assertion', writeAccess: 'rules:write',
    schema: AssertionSchema,
    unique: [{ field: 'name', caseInsensitive: true }],
  });
}

/** The /nat collection (wire-format.md §3.6): snat, dnat, masquerade and binat; an explicit order. */
import { Type } from 'typebox';
import { badRequest } from '../../core/errors.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { ModelRegistry } from '../../model/registry.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { INTERFACE_ADDRESS, parseAddress } from '../../compile/firewall-model.js';
import type { NatData, NatType } from '../../compile/firewall-types.js';
import { parsePortInput } from '../../model/port-input.js';
import { NatSchema, OptionalNullable, OptionalPortInput, Port, StatusSchema } from '../../compile/firewall-schemas.js';
import { addressFamily, normaliseAddress, normaliseInterface, normaliseLabel, normaliseProtocol, portRange, portsAllowed, SentFields } from './values.js';
import { addressAliasChecks } from './aliases.js';

export const NAT_KIND = 'nat';
const TYPE_INPUTS: Record<string, NatType> = { snat: 'snat', dnat: 'dnat', rdr: 'dnat', masquerade: 'masquerade', masq: 'masquerade', binat: 'binat' };

function requestSchema(create: boolean) {
  return Type.Object({
    nat_type: Type.String({ description: 'snat, dnat (also rdr), masquerade (also masq), binat' }),
    interface: Type.String(),
    protocol: Type.String(),
    redirect_addr: Type.Optional(Type.String()),
    src_addr: Type.Optional(Type.String()),
    dst_addr: Type.Optional(Type.String()),
    src_port_start: OptionalNullable(Port()),
    src_port_end: OptionalNullable(Port()),
    dst_port_start: OptionalNullable(Port()),
    dst_port_end: OptionalNullable(Port()),
    redirect_port_start: OptionalNullable(Port()),
    redirect_port_end: OptionalNullable(Port()),
    src_port: OptionalPortInput(),
    dst_port: OptionalPortInput(),
    redirect: Type.Optional(Type.Object({ address: Type.Optional(Type.String()), port: OptionalPortInput() }, { additionalProperties: false })),
    label: OptionalNullable(Type.String()),
    status: Type.Optional(StatusSchema),
    static_port: Type.Optional(Type.Boolean()),
    af_to_dst: OptionalNullable(Type.String()),
    id: Type.Optional(Type.String()),
    created_at: Type.Optional(Type.String()),
    updated_at: Type.Optional(Type.String()),
  }, { required: create ? ['nat_type', 'interface', 'protocol'] : [], additionalProperties: false });
}

/** The body POST /nat takes (the third-party importer validates with it too). */
export const NatCreateBody = requestSchema(true);
export const NatUpdateBody = requestSchema(false);

const has = (body: Record<string, unknown>, key: string) => Object.prototype.hasOwnProperty.call(body, key);
const isSingleAddress = (address: string) => {
  const parsed = parseAddress(address);
  return parsed?.kind === 'block' && parsed.cidr.prefix === (parsed.family === 4 ? 32 : 128) && !address.includes('/');
};

export function toStoredNat(body: Record<string, unknown>, existing?: ConfigObject): ConfigData {
  const nat: NatData = existing
    ? structuredClone(existing.data as unknown as NatData)
    : { nat_type: 'masquerade', interface: '', protocol: 'any', src_addr: 'any', src_port: null, dst_addr: 'any', dst_port: null, redirect: { address: 'any', port: null }, label: null, status: 'active', static_port: false };
  if (has(body, 'nat_type')) {
    const input = (body.nat_type as string).toLowerCase();
    if (input === 'nat64' || input === 'nat46') throw badRequest(`body.nat_type: ${input} is not supported (nftables has no address-family translation)`);
    const type = TYPE_INPUTS[input];
    if (!type) throw badRequest('body.nat_type must be one of: snat, dnat, masquerade, binat');
    nat.nat_type = type;
  }
  if (has(body, 'interface')) {
    const iface = normaliseInterface(body.interface as string);
    if (!iface) throw badRequest('body.interface is required');
    nat.interface = iface;
  }
  if (has(body, 'protocol')) nat.protocol = normaliseProtocol(body.protocol as string);
  // The record form first, the flat request fields win; `sent` remembers which field set each value, so a
  // refusal in checkNat names the field the client wrote.
  const sent = new SentFields();
  const redirect = (body.redirect ?? {}) as Record<string, unknown>;
  if (redirect.address !== undefined) nat.redirect.address = normaliseAddress(redirect.address as string, sent.set('redirect_addr', 'redirect.address'));
  if (redirect.port !== undefined) nat.redirect.port = parsePortInput(redirect.port, `body.${sent.set('redirect_port', 'redirect.port')}`);
  for (const side of ['src_port', 'dst_port'] as const) {
    if (body[side] !== undefined) nat[side] = parsePortInput(body[side], `body.${sent.set(side, side)}`);
  }
  if (has(body, 'redirect_addr')) nat.redirect.address = normaliseAddress(body.redirect_addr as string, sent.set('redirect_addr', 'redirect_addr'));
  if (has(body, 'src_addr')) nat.src_addr = normaliseAddress(body.src_addr as string, sent.set('src_addr', 'src_addr'));
  if (has(body, 'dst_addr')) nat.dst_addr = normaliseAddress(body.dst_addr as string, sent.set('dst_addr', 'dst_addr'));
  for (const side of ['src_port', 'dst_port', 'redirect_port'] as const) {
    if (has(body, `${side}_start`) || has(body, `${side}_end`)) {
      sent.set(side, has(body, `${side}_start`) ? `${side}_start` : `${side}_end`);
      if (has(body, `${side}_end`)) sent.set(`${side}_end`, `${side}_end`);
      const range = portRange(body[`${side}_start`] as number | null, body[`${side}_end`] as number | null, side);
      if (side === 'redirect_port') nat.redirect.port = range;
      else nat[side] = range;
    }
  }
  if (has(body, 'label')) nat.label = normaliseLabel(body.label as string | null);
  if (has(body, 'status')) nat.status = body.status as NatData['status'];
  if (has(body, 'static_port')) nat.static_port = body.static_port as boolean;
  if (body.af_to_dst !== undefined && body.af_to_dst !== null && body.af_to_dst !== '') {
    throw badRequest('body.af_to_dst: address-family translation (nat64/nat46) is not supported');
  }
  if (!nat.interface) throw badRequest('body.interface is required');
  checkNat(nat, sent);
  return nat as unknown as ConfigData;
}

const RECORD_PORT_NAMES = { dst_port: 'dst_port', src_port: 'src_port', redirect_port: 'redirect.port' } as const;

/** Invariants across fields; each refusal names the field as the client sent it (flat request names otherwise). */
function checkNat(nat: NatData, sent: SentFields): void {
  const ports = { dst_port: nat.dst_port, src_port: nat.src_port, redirect_port: nat.redirect.port };
  const ported = (Object.keys(ports) as (keyof typeof ports)[]).filter((side) => ports[side] !== null);
  const portField = (side: keyof typeof ports) => sent.name(side, `${side}_start`);
  if (ported.length > 0 && !portsAllowed(nat.protocol)) {
    const named = ported.find((side) => sent.has(side));
    if (named) throw badRequest(`body.${sent.name(named)}: ports need protocol tcp, udp or tcp/udp (protocol is ${nat.protocol})`);
    // The ports were stored before; the protocol sent now is what cannot carry them.
    throw badRequest(`body.protocol: ${nat.protocol} cannot match ports and the NAT rule has ${RECORD_PORT_NAMES[ported[0]]}; clear it (null) or use tcp, udp or tcp/udp`);
  }
  if (nat.redirect.port && nat.redirect.port.start !== nat.redirect.port.end) {
    const field = sent.name('redirect_port_end', sent.name('redirect_port', 'redirect_port_end'));
    throw badRequest(`body.${field}: the redirect port must be a single port (every matched port is sent to it)`);
  }
  const families = [nat.src_addr, nat.dst_addr].map(addressFamily).filter(Boolean);
  if (families.length === 2 && families[0] !== families[1]) {
    throw badRequest(`body.${sent.has('dst_addr') || !sent.has('src_addr') ? 'dst_addr' : 'src_addr'}: source and destination address families differ`);
  }
  if (nat.static_port && nat.nat_type !== 'snat' && nat.nat_type !== 'masquerade') {
    throw badRequest(`body.static_port applies to snat and masquerade only (not ${nat.nat_type})`);
  }
  // pfctl: "the 'static-port' option can't be used when specifying a port range".
  if (nat.static_port && nat.redirect.port) throw badRequest('body.static_port cannot be combined with a redirect port (the port is either kept or translated)');
  if (nat.nat_type === 'masquerade') {
    // Masquerade's target is the interface address by definition: saying so is the same as leaving it empty.
    if (nat.redirect.address === INTERFACE_ADDRESS) nat.redirect.address = 'any';
    if (nat.redirect.address !== 'any') throw badRequest(`body.${sent.name('redirect_addr')}: masquerade translates to the interface address; leave it empty or any`);
    if (nat.redirect.port) throw badRequest(`body.${portField('redirect_port')}: masquerade takes no redirect port`);
    return;
  }
  const target = sent.name('redirect_addr');
  if (!isSingleAddress(nat.redirect.address)) throw badRequest(`body.${target} must be a single IPv4 or IPv6 address for ${nat.nat_type}`);
  const family = addressFamily(nat.redirect.address)!;
  if (families.some((f) => f !== family)) throw badRequest(`body.${target}: IPv${family} target for IPv${families[0]} addresses`);
  if (nat.nat_type === 'dnat' && !nat.dst_port && !nat.redirect.port) {
    throw badRequest(`body.${portField('dst_port')}: a dnat rule needs a destination port or a redirect port`);
  }
  if (nat.nat_type === 'binat') {
    if (!isSingleAddress(nat.src_addr)) throw badRequest('body.src_addr must be the single inside address for binat');
    if (ported.length > 0) throw badRequest(`body.${portField(ported.find((side) => sent.has(side)) ?? ported[0])}: binat maps whole addresses; ports are not allowed`);
  }
}

/** The NAT model; create and update come from the flat request form (toStoredNat). */
export function declareNat(models: ModelRegistry): CollectionModel {
  const aliases = addressAliasChecks((data) => ({ src_addr: data.src_addr as string, dst_addr: data.dst_addr as string }));
  return models.collection({
    kind: NAT_KIND, noun: 'NAT rule', writeAccess: 'nat:write',
    schema: NatSchema,
    references: aliases.references,
    validate: (data, ctx) => aliases.check(data, ctx.store),
  });
}

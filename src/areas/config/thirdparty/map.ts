import { isIP } from 'node:net';
import type { AddressMatch, MappedObject, MappingPlan, SkippedElement } from './model.js';
import { child, flag, list, text, type ForeignConfig } from './xml.js';

type Node = Record<string, unknown>;

/** Top-level sections the mapper reads (everything else is listed as skipped). */
const READ_SECTIONS = new Set(['system', 'interfaces', 'vlans', 'gateways', 'staticroutes', 'aliases', 'filter', 'nat', 'dhcpd', 'unbound', 'dnsmasq', 'OPNsense', 'installedpackages']);
/** Bookkeeping sections with no configuration to import. */
const BOOKKEEPING = new Set(['version', 'lastchange', 'revision', 'theme', 'trigger_initial_wizard', 'widgets', 'wizardtemp']);
/** OPNsense MVC models the mapper reads. */
const READ_MVC = new Set(['Firewall', 'wireguard', 'Kea', 'unboundplus', 'Gateways']);


/**
 * Maps an OPNsense or pfSense configuration into the intermediate model. Everything read and not mapped is
 * listed as skipped with the reason; nothing is dropped silently.
 */
export function mapForeignConfig(config: ForeignConfig, interfaceMap: Record<string, string> = {}): MappingPlan {
  const { root } = config;
  const objects: MappedObject[] = [];
  const skipped: SkippedElement[] = [];
  const skip = (source: string, element: string, reason: string) => skipped.push({ source, element, reason });
  const mapInterface = (name: string) => interfaceMap[name] ?? name;
  const system = child(root, 'system');
  const interfaces = child(root, 'interfaces');
  const mvc = child(root, 'OPNsense');

  // ---- interfaces and VLANs
  const interfaceNames: string[] = [];
  for (const [name, value] of Object.entries(interfaces)) {
    const node = (value && typeof value === 'object' ? value : {}) as Node;
    const source = `interfaces/${name}`;
    if (text(node.type) === 'group' || flag(node, 'virtual') || flag(node, 'internal_dynamic')) {
      skip(source, `interface ${name}`, 'interface group or virtual interface created by the source firewall itself');
      continue;
    }
    interfaceNames.push(name);
    const ipaddr = text(node.ipaddr);
    const ipaddr6 = text(node.ipaddrv6);
    const notes: string[] = [];
    const v4Mode = ipaddr === '' ? 'none' : isIP(ipaddr) ? 'static' : ipaddr === 'dhcp' ? 'dhcp' : 'other';
    if (v4Mode === 'other') notes.push(`IPv4 mode "${ipaddr}" has no equivalent; imported as none`);
    const v6Mode = ipaddr6 === '' ? 'none' : isIP(ipaddr6) ? 'static' : ipaddr6 === 'dhcp6' ? 'dhcp6' : ipaddr6 === 'slaac' ? 'slaac' : 'other';
    if (v6Mode === 'other') notes.push(`IPv6 mode "${ipaddr6}" (e.g. track interface) has no equivalent; imported as none`);
    objects.push({
      kind: 'interface', ref: `interface:${name}`, source,
      data: {
        name: mapInterface(name),
        source_name: name,
        device: text(node.if),
        description: text(node.descr) || name.toUpperCase(),
        enabled: flag(node, 'enable'),
        ipv4_mode: v4Mode === 'other' ? 'none' : v4Mode,
        ipv4_address: v4Mode === 'static' ? `${ipaddr}/${text(node.subnet) || '32'}` : null,
        ipv6_mode: v6Mode === 'other' ? 'none' : v6Mode,
        ipv6_address: v6Mode === 'static' ? `${ipaddr6}/${text(node.subnetv6) || '128'}` : null,
        mtu: /^\d+$/.test(text(node.mtu)) ? Number(text(node.mtu)) : null,
        block_private: flag(node, 'blockpriv'),
        block_bogons: flag(node, 'blockbogons'),
      },
      notes,
    });
  }
  /** A device of the source (igb1) → the local interface: mapped by device name, or through the logical interface using it. */
  const mapDevice = (device: string) => {
    if (interfaceMap[device]) return interfaceMap[device];
    const logical = Object.entries(interfaces).find(([, value]) => text((value as Node | undefined)?.if) === device)?.[0];
    return logical && interfaceMap[logical] ? interfaceMap[logical] : device;
  };
  list(child(root, 'vlans').vlan).forEach((node, index) => {
    const tag = Number(text(node.tag));
    const source = `vlans/vlan[${index}]`;
    if (!Number.isInteger(tag) || tag < 1 || tag > 4094) return skip(source, `VLAN ${text(node.tag)}`, 'tag is not 1-4094');
    if (!text(node.if)) return skip(source, `VLAN ${tag}`, 'no parent interface');
    const device = text(node.vlanif) || `${text(node.if)}.${tag}`;
    // the logical interface assigned to the VLAN device carries its address
    const assigned = Object.values(interfaces).find((value) => text((value as Node | undefined)?.if) === device) as Node | undefined;
    const ip = text(assigned?.ipaddr);
    objects.push({
      kind: 'vlan', ref: `vlan:${text(node.if)}.${tag}`, source,
      data: {
        parent: mapDevice(text(node.if)), tag, pcp: /^[0-7]$/.test(text(node.pcp)) ? Number(text(node.pcp)) : null, description: text(node.descr), device,
        ipv4_address: isIP(ip) === 4 && /^\d+$/.test(text(assigned?.subnet)) ? `${ip}/${text(assigned?.subnet)}` : null,
      },
    });
  });

  // Network keywords (`lan`, `lanip`, `opt1`) resolve through the interfaces' static addresses.
  const interfaceNet = (name: string, addressOnly: boolean, family: 4 | 6): string | undefined => {
    const node = child(interfaces, name);
    const ip = text(family === 6 ? node.ipaddrv6 : node.ipaddr);
    const prefix = Number(text(family === 6 ? node.subnetv6 : node.subnet));
    if (isIP(ip) !== family) return undefined;
    if (addressOnly) return ip;
    // an IPv6 interface network would need the prefix arithmetic of the source firewall's tracking modes
    return family === 4 && Number.isInteger(prefix) ? `${networkOf(ip, prefix)}/${prefix}` : undefined;
  };
  /** `any`, `(self)`, an interface's network (`lan`, `opt1`) or address (`lanip`, `wanip`). */
  const isKeyword = (value: string) =>
    value === 'any' || value === '(self)' || /^(wan|lan|opt\d+)(ip)?$/.test(value) || value in interfaces || (value.endsWith('ip') && value.slice(0, -2) in interfaces);
  const resolveKeyword = (keyword: string, ipVersion: string): { address?: string; reason?: string } => {
    if (keyword === 'any') return { address: 'any' };
    if (ipVersion === 'inet46') return { reason: `interface keyword "${keyword}" in a rule for both address families` };
    const family = ipVersion === 'inet6' ? 6 : 4;
    if (keyword === '(self)') return { reason: '"this firewall" ((self)) has no static equivalent' };
    if (keyword in interfaces) {
      const address = interfaceNet(keyword, false, family);
      return address ? { address } : { reason: `the IPv${family} network of ${keyword} is dynamic or unknown` };
    }
    const name = keyword.slice(0, -2);
    if (keyword.endsWith('ip') && name in interfaces) {
      const address = interfaceNet(name, true, family);
      return address ? { address } : { reason: `the IPv${family} address of ${name} is dynamic or unknown` };
    }
    return { reason: `network keyword "${keyword}" names an interface that is not in the file` };
  };

  // ---- gateways and static routes
  const gatewayNodes = [...list(child(root, 'gateways').gateway_item), ...list(child(mvc, 'Gateways').gateway_item)];
  const gateways = new Map<string, string | null>();
  gatewayNodes.forEach((node, index) => {
    const name = text(node.name);
    const source = `gateways/gateway_item[${index}]`;
    if (!name) return skip(source, 'gateway', 'no name');
    const address = text(node.gateway);
    const dynamic = address === 'dynamic' || address === '';
    if (!dynamic && !isIP(address)) return skip(source, `gateway ${name}`, `"${address}" is not an IP address`);
    gateways.set(name, dynamic ? null : address);
    objects.push({
      kind: 'gateway', ref: `gateway:${name}`, source,
      data: {
        name, interface: mapInterface(text(node.interface)), address: dynamic ? null : address, dynamic,
        ip_version: text(node.ipprotocol) === 'inet6' ? 'inet6' : 'inet', description: text(node.descr),
        default: flag(node, 'defaultgw'), weight: /^\d+$/.test(text(node.weight)) ? Number(text(node.weight)) : 1,
        monitor: text(node.monitor) || null, enabled: !flag(node, 'disabled'),
      },
      notes: dynamic ? ['dynamic gateway: its address is learned at run time (DHCP/PPP)'] : [],
    });
  });
  list(child(root, 'staticroutes').route).forEach((node, index) => {
    const network = text(node.network);
    const gateway = text(node.gateway);
    const source = `staticroutes/route[${index}]`;
    if (!isCidr(network)) return skip(source, `route ${network}`, network.includes('/') ? 'not a network in CIDR form' : `destination "${network}" is an alias or not a CIDR`);
    let address: string | null;
    if (gateways.has(gateway)) {
      address = gateways.get(gateway)!;
    } else if (isIP(gateway)) {
      address = gateway;
    } else {
      return skip(source, `route ${network}`, `gateway "${gateway}" is not defined`);
    }
    objects.push({
      kind: 'route', ref: `route:${index}`, source,
      data: { network, gateway: gateway, gateway_address: address, description: text(node.descr), enabled: !flag(node, 'disabled') },
      notes: address === null ? ['via a dynamic gateway: the next hop is resolved at run time'] : [],
    });
  });

  // ---- aliases (legacy and OPNsense MVC)
  const aliasNames = new Set<string>();
  const skippedAliases = new Set<string>();
  const mapAlias = (node: Node, source: string, mvcModel: boolean) => {
    const name = text(node.name);
    const type = text(node.type);
    if (!/^[A-Za-z0-9_]{1,31}$/.test(name)) return skip(source, `alias ${name}`, 'name must be 1-31 letters, digits or _');
    const separator = mvcModel ? /\n/ : /[\s\n]+/;
    const raw = mvcModel ? text(node.content) : text(node.address) || text(node.content) || text(node.url);
    const entries = raw.split(separator).map((e) => e.trim()).filter(Boolean);
    const supported = ['host', 'network', 'port', 'url', 'urltable', 'networkgroup', 'url_ports', 'urltable_ports'];
    if (!supported.includes(type)) {
      skippedAliases.add(name);
      return skip(source, `alias ${name}`, `type "${type}" (${type === 'geoip' ? 'country lists' : type === 'external' ? 'filled by an external program' : type === 'asn' ? 'AS numbers' : type === 'mac' ? 'MAC addresses' : 'no equivalent'}) is not imported`);
    }
    if (aliasNames.has(name)) return skip(source, `alias ${name}`, 'an alias of that name was already mapped from this file');
    aliasNames.add(name);
    objects.push({
      kind: 'alias', ref: `alias:${name}`, source,
      data: {
        name,
        type: type === 'url_ports' ? 'url' : type === 'urltable_ports' ? 'urltable' : type,
        entries,
        description: text(node.descr) || text(node.description),
        enabled: mvcModel ? text(node.enabled) !== '0' : true,
        ...(type.startsWith('url') ? { refresh_days: /^\d+$/.test(text(node.updatefreq)) ? Number(text(node.updatefreq)) : null } : {}),
      },
    });
  };
  const aliasStart = objects.length;
  list(child(root, 'aliases').alias).forEach((node, index) => mapAlias(node, `aliases/alias[${index}]`, false));
  list(child(mvc, 'Firewall', 'Alias', 'aliases').alias).forEach((node, index) => mapAlias(node, `OPNsense/Firewall/Alias/aliases/alias[${index}]`, true));
  // An alias nesting others is written after them (an alias can only name an alias that exists).
  objects.push(...nestedLast(objects.splice(aliasStart)));

  /** Source/destination of a legacy rule: any, network (keyword or alias), address (IP/CIDR/alias), port, not. */
  const legacyMatch = (node: Node, ipVersion: string, forNat = false): { match?: AddressMatch; reason?: string; note?: string } => {
    const port = text(node.port) || null;
    const invert = flag(node, 'not');
    if ('any' in node) return { match: { address: 'any', port, invert } };
    const network = text(node.network);
    const address = text(node.address);
    const value = network || address;
    if (!value) return { match: { address: 'any', port, invert } };
    if (aliasNames.has(value)) return { match: { address: value, port, invert } };
    if (skippedAliases.has(value)) return { reason: `uses alias ${value}, which was not imported` };
    if (network && isKeyword(network)) {
      const resolved = resolveKeyword(network, ipVersion);
      if (resolved.address) return { match: { address: resolved.address, port, invert }, note: resolved.address !== network ? `${network} resolved to ${resolved.address}` : undefined };
      if (forNat && network.endsWith('ip')) return { match: { address: 'any', port, invert }, note: `${network} is dynamic: matches any destination on the interface` };
      return { reason: resolved.reason };
    }
    if (!isIP(value) && !isCidr(value)) return { reason: `"${value}" is neither an address nor a known alias` };
    return { match: { address: value, port, invert } };
  };
  /** Links to the aliases a rule names, so a rule whose alias was not imported is skipped saying so. */
  const aliasLinks = (...matches: (AddressMatch | undefined)[]): Record<string, string> => Object.fromEntries(
    matches.flatMap((m, i) => [m?.address, m?.port].filter((v): v is string => !!v && aliasNames.has(v)).map((name, j) => [`alias_${i}_${j}`, `alias:${name}`])),
  );
  const portAliasOk = (port: string | null): string | undefined =>
    port && !/^[\d:\-]+$/.test(port) && !aliasNames.has(port) ? (skippedAliases.has(port) ? `uses port alias ${port}, which was not imported` : `port "${port}" is neither a port, a range nor a known alias`) : undefined;

  // ---- filter rules (legacy: one rule per listed interface; OPNsense MVC rules)
  list(child(root, 'filter').rule).forEach((node, index) => {
    const source = `filter/rule[${index}]`;
    const description = text(node.descr);
    const label = `rule "${description || index}"`;
    const type = text(node.type) || 'pass';
    if (!['pass', 'block', 'reject'].includes(type)) return skip(source, label, `action "${type}" has no equivalent`);
    const ipVersion = ['inet', 'inet6', 'inet46'].includes(text(node.ipprotocol)) ? text(node.ipprotocol) : 'inet';
    const from = legacyMatch(child(node, 'source'), ipVersion);
    const to = legacyMatch(child(node, 'destination'), ipVersion);
    const reason = from.reason ?? to.reason ?? portAliasOk(from.match?.port ?? null) ?? portAliasOk(to.match?.port ?? null);
    if (reason) return skip(source, label, reason);
    const names = text(node.interface).split(',').map((s) => s.trim()).filter(Boolean);
    const floating = flag(node, 'floating');
    const targets = names.length ? names : floating ? ['any'] : [];
    if (targets.length === 0) return skip(source, label, 'no interface');
    targets.forEach((iface, part) => {
      objects.push({
        kind: 'rule', ref: `rule:${index}:${part}`, source, links: aliasLinks(from.match, to.match),
        data: {
          action: type, interface: iface === 'any' ? 'any' : mapInterface(iface), direction: text(node.direction) || 'in',
          ip_version: ipVersion,
          protocol: text(node.protocol) || 'any', source: from.match, destination: to.match,
          log: flag(node, 'log'), quick: floating ? flag(node, 'quick') : true, enabled: !flag(node, 'disabled'),
          description, gateway: text(node.gateway) || null, floating,
        },
        notes: [from.note, to.note, targets.length > 1 ? `floating rule on ${targets.length} interfaces: one rule per interface` : undefined].filter((n): n is string => !!n),
      });
    });
  });
  list(child(mvc, 'Firewall', 'Filter', 'rules').rule).forEach((node, index) => {
    const source = `OPNsense/Firewall/Filter/rules/rule[${index}]`;
    const description = text(node.description);
    const label = `rule "${description || index}"`;
    const action = text(node.action) || 'pass';
    if (!['pass', 'block', 'reject'].includes(action)) return skip(source, label, `action "${action}" has no equivalent`);
    const ipVersion = ['inet', 'inet6', 'inet46'].includes(text(node.ipprotocol)) ? text(node.ipprotocol) : 'inet';
    const side = (net: string, not: string, port: string): { match?: AddressMatch; reason?: string; note?: string } => {
      const value = net || 'any';
      const wrapped = isKeyword(value) ? { network: value } : { address: value };
      const mapped = legacyMatch({ ...wrapped, ...(port ? { port } : {}) }, ipVersion);
      if (mapped.match) mapped.match.invert = not === '1';
      return mapped;
    };
    const from = side(text(node.source_net), text(node.source_not), text(node.source_port));
    const to = side(text(node.destination_net), text(node.destination_not), text(node.destination_port));
    const reason = from.reason ?? to.reason ?? portAliasOk(from.match?.port ?? null) ?? portAliasOk(to.match?.port ?? null);
    if (reason) return skip(source, label, reason);
    const names = text(node.interface).split(',').map((s) => s.trim()).filter(Boolean);
    (names.length ? names : ['any']).forEach((iface, part) => {
      objects.push({
        kind: 'rule', ref: `rule:mvc:${index}:${part}`, source, links: aliasLinks(from.match, to.match),
        data: {
          action, interface: iface === 'any' ? 'any' : mapInterface(iface), direction: text(node.direction) || 'in',
          ip_version: ipVersion,
          protocol: (text(node.protocol) || 'any').toLowerCase(), source: from.match, destination: to.match,
          log: text(node.log) === '1', quick: text(node.quick) !== '0', enabled: text(node.enabled) !== '0',
          description, gateway: text(node.gateway) || null, floating: names.length !== 1,
        },
        notes: [from.note, to.note].filter((n): n is string => !!n),
      });
    });
  });
  for (const section of ['snatrules', 'npt', 'onetoone']) {
    const rules = list(child(mvc, 'Firewall', 'Filter', section).rule);
    if (rules.length) skip(`OPNsense/Firewall/Filter/${section}`, `${rules.length} ${section} rule(s)`, 'OPNsense MVC NAT rules of this type are not mapped (the legacy nat section is)');
  }

  // ---- NAT: port forwards and outbound
  const nat = child(root, 'nat');
  list(nat.rule).forEach((node, index) => {
    const source = `nat/rule[${index}]`;
    const description = text(node.descr);
    const label = `port forward "${description || index}"`;
    const target = text(node.target);
    if (!target) return skip(source, label, 'no redirect target');
    if (!isIP(target) && !aliasNames.has(target)) return skip(source, label, `redirect target "${target}" is neither an address nor a known alias`);
    const ipVersion = text(node.ipprotocol) === 'inet6' ? 'inet6' : 'inet';
    const from = legacyMatch(child(node, 'source'), ipVersion, true);
    const to = legacyMatch(child(node, 'destination'), ipVersion, true);
    const reason = from.reason ?? to.reason;
    if (reason) return skip(source, label, reason);
    objects.push({
      kind: 'nat_port_forward', ref: `nat_port_forward:${index}`, source, links: aliasLinks(from.match, to.match),
      data: {
        interface: mapInterface(text(node.interface) || 'wan'), protocol: text(node.protocol) || 'tcp',
        ip_version: ipVersion, source: from.match, destination: to.match,
        redirect_address: target, redirect_port: text(node['local-port']) || null, description, enabled: !flag(node, 'disabled'),
        no_rdr: flag(node, 'nordr'),
      },
      notes: [from.note, to.note, text(node['associated-rule-id']) ? 'the source firewall generated a filter rule for it: import or add the matching pass rule' : undefined].filter((n): n is string => !!n),
    });
  });
  const outbound = child(nat, 'outbound');
  const mode = text(outbound.mode) || 'automatic';
  if (mode === 'automatic' || mode === 'disabled') {
    skip('nat/outbound/mode', `outbound NAT mode ${mode}`, mode === 'automatic' ? 'automatic outbound NAT is derived by the source firewall from its interfaces: add a masquerade rule per WAN' : 'outbound NAT disabled: nothing to import');
  }
  list(outbound.rule).forEach((node, index) => {
    const source = `nat/outbound/rule[${index}]`;
    const description = text(node.descr);
    const label = `outbound NAT "${description || index}"`;
    const from = legacyMatch(child(node, 'source'), 'inet');
    const to = legacyMatch(child(node, 'destination'), 'inet');
    const reason = from.reason ?? to.reason;
    if (reason) return skip(source, label, reason);
    const target = text(node.target);
    if (target && !isIP(target) && !aliasNames.has(target) && !target.endsWith('ip')) return skip(source, label, `translation target "${target}" is not an address`);
    objects.push({
      kind: 'nat_outbound', ref: `nat_outbound:${index}`, source, links: aliasLinks(from.match, to.match),
      data: {
        interface: mapInterface(text(node.interface) || 'wan'), protocol: text(node.protocol) || 'any', source: from.match, destination: to.match,
        translation: flag(node, 'nonat') ? 'none' : !target || target.endsWith('ip') ? 'interface' : target,
        static_port: flag(node, 'staticnatport'), description, enabled: !flag(node, 'disabled') && mode !== 'disabled',
      },
      notes: mode === 'automatic' ? ['the source firewall was in automatic mode, where manual rules are not used'] : [],
    });
  });
  const oneToOne = list(nat.onetoone);
  if (oneToOne.length) skip('nat/onetoone', `${oneToOne.length} 1:1 NAT rule(s)`, '1:1 NAT is not mapped');

  // ---- DHCP static mappings (ISC dhcpd per interface, Kea reservations)
  for (const [iface, value] of Object.entries(child(root, 'dhcpd'))) {
    list((value as Node | undefined)?.staticmap).forEach((node, index) => {
      const source = `dhcpd/${iface}/staticmap[${index}]`;
      const mac = text(node.mac).toLowerCase();
      const label = `static mapping ${text(node.hostname) || mac || index}`;
      if (!/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/.test(mac)) return skip(source, label, mac ? `MAC "${mac}" is malformed` : 'no MAC address (client-id mappings are not mapped)');
      const ip = text(node.ipaddr);
      if (ip && isIP(ip) !== 4) return skip(source, label, `"${ip}" is not an IPv4 address`);
      objects.push({
        kind: 'dhcp_static_mapping', ref: `dhcp:${iface}:${index}`, source,
        data: { interface: mapInterface(iface), mac, ip_address: ip || null, hostname: text(node.hostname) || null, description: text(node.descr), server: 'isc-dhcpd' },
      });
    });
  }
  const kea = child(mvc, 'Kea', 'dhcp4');
  const subnets = new Map(list(child(kea, 'subnets').subnet4).map((node) => [text(node['@_uuid']), text(node.subnet)]));
  list(child(kea, 'reservations').reservation).forEach((node, index) => {
    const source = `OPNsense/Kea/dhcp4/reservations/reservation[${index}]`;
    const mac = text(node.hw_address).toLowerCase();
    const label = `reservation ${text(node.hostname) || mac || index}`;
    if (!/^([0-9a-f]{2}:){5}[0-9a-f]{2}$/.test(mac)) return skip(source, label, 'no valid MAC address');
    objects.push({
      kind: 'dhcp_static_mapping', ref: `kea:${text(node['@_uuid']) || index}`, source,
      data: { subnet: subnets.get(text(node.subnet)) ?? null, mac, ip_address: text(node.ip_address) || null, hostname: text(node.hostname) || null, description: text(node.description), server: 'kea' },
    });
  });

  // ---- DNS host overrides (Unbound legacy, OPNsense Unbound MVC, dnsmasq)
  const hostOverride = (node: Node, source: string, server: string, fields: { host: string; ip: string; description: string }) => {
    const hostname = text(node[fields.host]);
    const domain = text(node.domain);
    const address = text(node[fields.ip]);
    const label = `host override ${hostname}.${domain}`;
    if (!domain) return skip(source, label, 'no domain');
    if (!isIP(address)) return skip(source, label, address ? `"${address}" is not an IP address` : 'no address');
    objects.push({
      kind: 'dns_host_override', ref: `dns:${source}`, source,
      data: { hostname, domain, address, description: text(node[fields.description]), enabled: text(node.enabled) !== '0', server },
    });
  };
  const unbound = child(root, 'unbound');
  list(unbound.hosts).forEach((node, index) => hostOverride(node, `unbound/hosts[${index}]`, 'unbound', { host: 'host', ip: 'ip', description: 'descr' }));
  list(child(root, 'dnsmasq').hosts).forEach((node, index) => hostOverride(node, `dnsmasq/hosts[${index}]`, 'dnsmasq', { host: 'host', ip: 'ip', description: 'descr' }));
  list(child(mvc, 'unboundplus', 'hosts').host).forEach((node, index) => {
    const source = `OPNsense/unboundplus/hosts/host[${index}]`;
    const rr = text(node.rr) || 'A';
    if (rr !== 'A' && rr !== 'AAAA') return skip(source, `host override ${text(node.hostname)}.${text(node.domain)}`, `${rr} records are not mapped`);
    hostOverride(node, source, 'unbound', { host: 'hostname', ip: 'server', description: 'description' });
  });
  const domainOverrides = list(unbound.domainoverrides).length + list(child(mvc, 'unboundplus', 'domains').domain).length;
  if (domainOverrides) skip('unbound/domainoverrides', `${domainOverrides} domain override(s)`, 'conditional forwarding is not mapped');

  // ---- WireGuard (OPNsense core, pfSense package)
  const wgKey = (value: string) => /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/.test(value);
  const wg = child(mvc, 'wireguard');
  const clients = new Map(list(child(wg, 'client', 'clients').client).map((node) => [text(node['@_uuid']), node]));
  const attached = new Set<string>();
  list(child(wg, 'server', 'servers').server).forEach((node, index) => {
    const source = `OPNsense/wireguard/server/servers/server[${index}]`;
    const name = text(node.name);
    const uuid = text(node['@_uuid']) || String(index);
    if (!wgKey(text(node.privkey))) return skip(source, `WireGuard instance ${name}`, 'private key missing or not a WireGuard key');
    const ref = `wg_tunnel:${uuid}`;
    objects.push({
      kind: 'wg_tunnel', ref, source,
      data: {
        name, private_key: text(node.privkey), public_key: text(node.pubkey), listen_port: Number(text(node.port)) || 51820,
        address: text(node.tunneladdress).split(',').map((s) => s.trim()).filter(Boolean).join(', '), dns: text(node.dns) || null,
        mtu: /^\d+$/.test(text(node.mtu)) ? Number(text(node.mtu)) : null, enabled: text(node.enabled) !== '0',
      },
    });
    for (const peerId of text(node.peers).split(',').map((s) => s.trim()).filter(Boolean)) {
      const peer = clients.get(peerId);
      if (!peer) {
        skip(source, `peer ${peerId} of ${name}`, 'the instance names a peer that is not in the file');
        continue;
      }
      attached.add(peerId);
      const psk = text(peer.psk);
      if (!wgKey(text(peer.pubkey))) {
        skip(`OPNsense/wireguard/client/clients/client[${peerId}]`, `peer ${text(peer.name)}`, 'public key missing or not a WireGuard key');
        continue;
      }
      const host = text(peer.serveraddress);
      objects.push({
        kind: 'wg_peer', ref: `wg_peer:${uuid}:${peerId}`, source: `OPNsense/wireguard/client/clients/client[${peerId}]`, links: { tunnel_id: ref },
        data: {
          name: text(peer.name), public_key: text(peer.pubkey), ...(psk ? { preshared_key: psk } : {}),
          allowed_ips: text(peer.tunneladdress).split(',').map((s) => s.trim()).filter(Boolean),
          endpoint: host ? `${host}:${text(peer.serverport) || '51820'}` : null,
          persistent_keepalive: /^\d+$/.test(text(peer.keepalive)) ? Number(text(peer.keepalive)) : null, enabled: text(peer.enabled) !== '0',
        },
      });
    }
  });
  for (const [id, peer] of clients) if (!attached.has(id)) skip(`OPNsense/wireguard/client/clients/client[${id}]`, `peer ${text(peer.name)}`, 'not attached to any WireGuard instance');
  const pfWg = child(root, 'installedpackages', 'wireguard');
  const pfTunnels = new Map<string, string>();
  list(child(pfWg, 'tunnels').item).forEach((node, index) => {
    const source = `installedpackages/wireguard/tunnels/item[${index}]`;
    const name = text(node.name);
    if (!wgKey(text(node.privatekey))) return skip(source, `WireGuard tunnel ${name}`, 'private key missing or not a WireGuard key');
    const ref = `wg_tunnel:pf:${name}`;
    pfTunnels.set(name, ref);
    objects.push({
      kind: 'wg_tunnel', ref, source,
      data: {
        name, private_key: text(node.privatekey), public_key: text(node.publickey), listen_port: Number(text(node.listenport)) || 51820,
        address: list(child(node, 'addresses').row).map((row) => `${text(row.address)}/${text(row.mask)}`).join(', '),
        dns: null, mtu: /^\d+$/.test(text(node.mtu)) ? Number(text(node.mtu)) : null, enabled: text(node.enabled) === 'yes',
      },
    });
  });
  list(child(pfWg, 'peers').item).forEach((node, index) => {
    const source = `installedpackages/wireguard/peers/item[${index}]`;
    const label = `peer ${text(node.descr) || index}`;
    const tunnel = pfTunnels.get(text(node.tun));
    if (!tunnel) return skip(source, label, text(node.tun) === 'unassigned' ? 'not assigned to a tunnel' : `tunnel "${text(node.tun)}" was not imported`);
    if (!wgKey(text(node.publickey))) return skip(source, label, 'public key missing or not a WireGuard key');
    const psk = text(node.presharedkey);
    const host = text(node.endpoint);
    objects.push({
      kind: 'wg_peer', ref: `wg_peer:pf:${index}`, source, links: { tunnel_id: tunnel },
      data: {
        name: text(node.descr), public_key: text(node.publickey), ...(psk ? { preshared_key: psk } : {}),
        allowed_ips: list(child(node, 'allowedips').row).map((row) => `${text(row.address)}/${text(row.mask)}`),
        endpoint: host ? `${host}:${text(node.port) || '51820'}` : null,
        persistent_keepalive: /^\d+$/.test(text(node.persistentkeepalive)) ? Number(text(node.persistentkeepalive)) : null, enabled: text(node.enabled) === 'yes',
      },
    });
  });

  // ---- users (never their password hashes)
  const groups = list(system.group);
  const adminUids = new Set(groups.filter((g) => text(g.name) === 'admins').flatMap((g) => list(g.member).map(text)));
  list(system.user).forEach((node, index) => {
    const source = `system/user[${index}]`;
    const username = text(node.name);
    if (!/^[A-Za-z0-9._@-]{1,64}$/.test(username)) return skip(source, `user ${username}`, 'not a valid user name');
    const admin = text(node.groupname) === 'admins' || adminUids.has(text(node.uid)) || text(node.uid) === '0';
    objects.push({
      kind: 'imported_user', ref: `user:${username}`, source,
      data: { username, full_name: text(node.descr), email: text(node.email) || null, role: admin ? 'admin' : 'viewer', enabled: !flag(node, 'disabled'), source_scope: text(node.scope) || null },
      notes: ['password hash not imported: an administrator sets a password or links SSO'],
    });
  });

  // ---- what was not read at all
  for (const [section, value] of Object.entries(root)) {
    if (READ_SECTIONS.has(section) || BOOKKEEPING.has(section) || section.startsWith('@_') || value === '') continue;
    skip(section, section, 'section not mapped by the importer');
  }
  for (const iface of Object.keys(child(root, 'dhcpd'))) {
    skip(`dhcpd/${iface}`, `DHCP server on ${iface}`, 'server settings (ranges, options) are not mapped; its static mappings are');
  }
  if (Object.keys(child(root, 'dnsmasq')).some((key) => key !== 'hosts')) skip('dnsmasq', 'dnsmasq settings', 'DNS/DHCP settings of dnsmasq are not mapped; its host overrides are');
  if (Object.keys(unbound).some((key) => !['hosts', 'domainoverrides'].includes(key))) skip('unbound', 'DNS resolver settings', 'resolver settings are not mapped; its host overrides are');
  for (const [model, value] of Object.entries(mvc)) {
    if (READ_MVC.has(model) || value === '') continue;
    skip(`OPNsense/${model}`, model, 'OPNsense model not mapped by the importer');
  }
  for (const [section, value] of Object.entries(child(root, 'installedpackages'))) {
    if (section === 'wireguard' || value === '') continue;
    skip(`installedpackages/${section}`, section, 'package configuration not mapped by the importer');
  }
  const dnsServers = list(system.dnsserver).map(text).filter(Boolean);
  skip('system', 'system settings', 'hostname, domain, DNS servers and time zone are shown in the preview, not imported (appliance settings)');
  return {
    kind: config.kind,
    version: config.version,
    system: { hostname: text(system.hostname) || null, domain: text(system.domain) || null, dns_servers: dnsServers, timezone: text(system.timezone) || null },
    interfaces_found: interfaceNames,
    objects,
    skipped,
  };
}

function isCidr(value: string): boolean {
  const [address, prefix, extra] = value.split('/');
  const family = isIP(address);
  return family !== 0 && extra === undefined && prefix !== undefined && /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

function networkOf(ip: string, prefix: number): string {
  const value = ip.split('.').reduce((acc, octet) => (acc << 8) + Number(octet), 0) >>> 0;
  const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
  const network = (value & mask) >>> 0;
  return [24, 16, 8, 0].map((shift) => (network >>> shift) & 255).join('.');
}

/** Orders aliases so that every alias comes after the aliases it names (a cycle keeps the file order). */
function nestedLast(aliases: MappedObject[]): MappedObject[] {
  const byName = new Map(aliases.map((a) => [String(a.data.name), a]));
  const ordered: MappedObject[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (alias: MappedObject) => {
    const name = String(alias.data.name);
    if (state.has(name)) return;
    state.set(name, 'visiting');
    for (const entry of alias.data.entries as string[]) {
      const nested = byName.get(entry);
      if (nested && nested !== alias) visit(nested);
    }
    state.set(name, 'done');
    ordered.push(alias);
  };
  aliases.forEach(visit);
  return ordered;
}

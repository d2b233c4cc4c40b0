/**
 * Property test for the renderers other than Unbound/Kea/chrony and pf/nftables (issue 11): every string
 * field of every object or section of the VPN, reverse-proxy, IDS, system, settings (log rotation), updates,
 * DNS system nameservers, multi-WAN and ACME areas is enumerated from the schemas. Each one is either written
 * with hostile values through the HTTP API, or listed below as not rendered, with the reason. A hostile write
 * must answer 400 naming the field, or the rendered file must parse into exactly the intended directives
 * (compared with the rendering of a benign value of the same shape).
 */
import { compileLinuxRouting } from '../../src/areas/multiwan/compile-nftables.js';
import { ruleWords } from '../../src/platform/routing.js';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { parse as parseYaml } from 'yaml';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import { IpsecStored, WgPeerStored, WgTunnelStored } from '../../src/areas/vpn/schema.js';
import {
  CertResolver, Entrypoint, HttpMiddleware, HttpRouter, HttpService, L4Service, ProxyConfig, TcpRouter, TlsCert, TlsOption, UdpRouter,
} from '../../src/areas/reverse-proxy/schema.js';
import { IdsConfig, RulesetCreate, RuleUpdate, SuppressionStored } from '../../src/areas/ids/schema.js';
import { Banner, Console, General, Ssh } from '../../src/areas/system/schema.js';
import { LogRotationConfig } from '../../src/areas/settings/schema.js';
import { SystemDns } from '../../src/areas/dns/schema.js';
import { Gateway, Group, GroupMember, Instance, InstanceMember, Leak, Policy } from '../../src/areas/multiwan/schema.js';
import { CertStored, DnsProviderStored, TargetStored } from '../../src/areas/acme/schema.js';
import { parseRuleLine } from '../../src/areas/ids/rules-parser.js';

// ---- enumeration -------------------------------------------------------------------------------------

type JsonSchema = { type?: string; enum?: unknown[]; format?: string; anyOf?: JsonSchema[]; items?: JsonSchema; properties?: Record<string, JsonSchema> };

const SCHEMAS: Record<string, object> = {
  wg_tunnel: WgTunnelStored, wg_peer: WgPeerStored, ipsec_sa: IpsecStored,
  rp_entrypoint: Entrypoint, rp_http_router: HttpRouter, rp_http_service: HttpService, rp_http_middleware: HttpMiddleware,
  rp_tcp_router: TcpRouter, rp_l4_service: L4Service, rp_udp_router: UdpRouter, rp_tls_cert: TlsCert, rp_tls_option: TlsOption,
  rp_cert_resolver: CertResolver, rp_config: ProxyConfig,
  ids_config: IdsConfig, ids_ruleset: RulesetCreate, ids_rule: RuleUpdate, ids_suppression: SuppressionStored,
  system_general: General, system_banner: Banner, system_ssh: Ssh, system_console: Console,
  settings_log_rotation: LogRotationConfig, dns_system: SystemDns,
  mw_instance: Instance, mw_instance_member: InstanceMember, mw_gateway: Gateway, mw_group: Group, mw_group_member: GroupMember,
  mw_policy: Policy, mw_leak: Leak,
  acme_cert: CertStored, acme_dns_provider: DnsProviderStored, acme_export_target: TargetStored,
};

/** The config object of an export target is open-ended in the schema; its keys are enumerated here. */
const EXTRA_FIELDS = ['cert_path', 'key_path', 'chain_path', 'mode', 'key_mode', 'owner', 'url', 'auth_header'].map((key) => `acme_export_target.config.${key}`);

const isString = (schema: JsonSchema | undefined): boolean =>
  !!schema && (schema.type === 'string' || (schema.anyOf ?? []).some(isString) || (schema.type === 'array' && isString(schema.items)));
/** A closed set: every string the schema accepts is listed (enum) or a UUID, so no hostile text can be stored. */
const isClosed = (schema: JsonSchema): boolean => {
  const strings = [schema, ...(schema.anyOf ?? []), ...(schema.items ? [schema.items] : [])].filter((s) => s.type === 'string' || s.enum);
  return strings.length > 0 && strings.every((s) => Array.isArray(s.enum) || s.format === 'uuid');
};

function stringFields(): { open: string[]; closed: string[] } {
  const open: string[] = [];
  const closed: string[] = [];
  for (const [kind, schema] of Object.entries(SCHEMAS)) {
    for (const [name, field] of Object.entries((schema as JsonSchema).properties ?? {})) {
      if (!isString(field)) continue;
      (isClosed(field) ? closed : open).push(`${kind}.${name}`);
    }
  }
  return { open: [...open, ...EXTRA_FIELDS], closed };
}

/** String fields that reach no rendered file, with the reason (checked: each must be an enumerated field). */
const NOT_RENDERED: Record<string, string> = {
  'wg_tunnel.interface': 'assigned by the appliance (lowest free <prefix><N>, schema ^[a-z][a-z0-9]{0,9}[0-9]{1,4}$); never taken from a request',
  'wg_tunnel.public_key': 'derived from the private key by the appliance; the PUT handler drops it',
  'wg_peer.client_private_key': 'generated by the appliance (auto_generate_key); never taken from a request',
  'ipsec_sa.name': 'display name only: swanctl.conf names the connection bulwark-<SA id>',
  'ipsec_sa.enc_algo': 'derived by the appliance from esp_proposals (display only); never taken from a request',
  'ipsec_sa.auth_algo': 'derived by the appliance from the proposals (display only); never taken from a request',
  'rp_udp_router.rule': 'UDP routers match on the entry point only; the renderer never writes their rule',
  'rp_http_middleware.config_secrets': 'kept by the server, never taken from a request (400): the secrets split out of config_json, rendered back where config_json holds their placeholders (every config_json leaf, header values included, is exercised by caddy-injection.test.ts)',
  'ids_config.home_net': 'rendered into suricata.yaml only on linux: exercised by suricata-injection.test.ts',
  'ids_config.external_net': 'rendered into suricata.yaml only on linux: exercised by suricata-injection.test.ts',
  'ids_config.interfaces': 'rendered into suricata.yaml only on linux: exercised by suricata-injection.test.ts',
  'ids_config.eve_log_path': 'stored only: Suricata writes EVE into its own runtime directory, never to this path',
  'ids_config.syslog_target': 'stored only: not written into suricata.yaml',
  'ids_ruleset.name': 'ruleset metadata; not written into bulwark.rules',
  'ids_ruleset.source_url': 'fetched through the outbound guard (https only); not written into a file',
  'mw_instance.name': 'instance metadata; anchors use the FIB number',
  'mw_instance.description': 'instance metadata; anchors use the FIB number',
  'mw_instance_member.interface': 'handed to the platform (pinInterface) as one argument; schema ^[A-Za-z0-9_.:-]+$',
  'mw_gateway.name': 'gateway metadata; anchors use interface and next hop',
  'mw_gateway.monitor_target': 'used by health probes as a connection target; never written into a file',
  'mw_gateway.monitor_expect': 'compared with probe answers; never written into a file',
  'mw_group.name': 'group metadata; anchors use the members',
  'mw_policy.name': 'policy metadata; the anchor label is built from the policy id',
  'mw_policy.description': 'policy metadata',
  'mw_policy.geoip_country': 'stored only; GeoIP matching is not compiled into the anchors in this release',
  'mw_policy.schedule_id': 'stored only; schedules are not compiled into the anchors in this release',
  'mw_leak.name': 'leak metadata; the anchor label is built from the leak id',
  'acme_cert.common_name': 'not rendered into a file (DNS-name grammar, checkName); sent to the CA and webhooks as JSON',
  'acme_cert.sans': 'not rendered into a file (DNS-name grammar, checkName); sent to the CA and webhooks as JSON',
  'acme_cert.issued_at': 'set by the appliance from the issued certificate',
  'acme_cert.expires_at': 'set by the appliance from the issued certificate',
  'acme_cert.last_renew_attempt': 'set by the appliance',
  'acme_cert.last_renew_error': 'set by the appliance',
  'acme_cert.cert_pem': 'issued material, written verbatim as the certificate file by the confined writer; never from a request',
  'acme_cert.chain_pem': 'issued material, written verbatim as the chain file by the confined writer; never from a request',
  'acme_cert.key_pem': 'issued material, written verbatim as the key file by the confined writer; never from a request',
  'acme_dns_provider.name': 'provider metadata; not rendered',
  'acme_dns_provider.zone': 'DNS-name grammar (checkName); sent to Cloudflare as a query parameter, or written into an nsupdate script through nsupdateScript (nsupdate-injection.test.ts)',
  'acme_dns_provider.api_token': 'write-only secret sent to the provider API; not rendered',
  'acme_dns_provider.aws_secret_key': 'write-only secret; not rendered',
  'acme_export_target.last_run_at': 'set by the appliance',
  'acme_export_target.last_run_error': 'set by the appliance',
  'acme_export_target.config.url': 'webhook target: an https URL fetched through the outbound guard; no file is written',
  'acme_export_target.config.auth_header': 'webhook header value: one line, no CR/LF/NUL (400); no file is written',
};

// ---- hostile values and file shapes ------------------------------------------------------------------

const HOSTILE = [
  'a"b', "a'b", 'a\nb', 'a\rb', 'a\u0000b', 'a{b}', 'a;b', 'include: "/etc/passwd"', 'x\nPostUp = touch /tmp/x', 'x\\',
  'a#b', 'a%b', 'a: b', '- a', '* * * * *', '\u001b[31mred', 'x\n[Peer]\nEndpoint = evil:1', 'a b', 'x\ninclude /etc/shadow',
];

interface Variant {
  value: unknown;
  /** A benign value of the same shape; the hostile rendering must have the structure of the twin's. */
  twin: unknown;
  /** For YAML: the twin's marker string and what it must have become in the hostile rendering. */
  from?: string;
  to?: string;
  /** Only a 400 is acceptable for this variant. */
  mustRefuse?: boolean;
}

interface Target {
  /** Name the 400 must carry. */
  field: string;
  write(value: unknown): Promise<LightMyRequestResponse>;
  render(): Promise<string>;
  shape(text: string): unknown;
  variants(hostile: string): Variant[];
  /** Values only 400 is acceptable for (e.g. file paths). */
  onlyRefusal?: boolean;
  /** The file is YAML: the hostile rendering must equal the benign one with the marker replaced. */
  yaml?: boolean;
}

const simple = (benign: string) => (hostile: string): Variant[] => [
  { value: hostile, twin: benign, from: benign, to: hostile },
  { value: `${benign}${hostile}`, twin: benign, from: benign, to: `${benign}${hostile}` },
];

/** `[section]` and `Key` of every line of a WireGuard file; anything else is INVALID. */
function iniShape(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => {
    const section = /^\[(Interface|Peer)\]$/.exec(line);
    if (section) return `[${section[1]}]`;
    const pair = /^([A-Za-z]+) = \S+( \S+)*$/.exec(line);
    return pair && !/[\r\u0000]/.test(line) ? pair[1] : `INVALID: ${JSON.stringify(line)}`;
  });
}

/** Sections and keys of every line of swanctl.conf; a value must be one token or quoted strings without a quote inside. */
const swanctlShape = (text: string) => text.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#')).map((line) => {
  if (line === '}') return '}';
  const section = /^([A-Za-z0-9-]+) \{$/.exec(line);
  if (section) return `${section[1].replace(/[0-9a-f-]{36}/, '<id>')} {`;
  const pair = /^([a-z0-9_-]+) = ("[^"\\\u0000-\u001f]*"(,"[^"\\\u0000-\u001f]*")*|[a-z0-9]+)$/.exec(line);
  return pair ? pair[1] : `INVALID: ${JSON.stringify(line)}`;
});

/** First token and token count of every line (hosts, resolv.conf, crontab, threshold.config, pf anchors). */
const lineShape = (text: string) => text.split('\n').filter(Boolean).map((line) => (/[\r\u0000\u001b]/.test(line) ? 'CONTROL' : [line.split(/[ \t]+/)[0], line.split(/[ \t]+/).length]));

/** Terminal text: control characters other than LF/TAB, and (for issue) backslashes agetty would expand. */
const textShape = (issue: boolean) => (text: string) => ({
  controls: (text.match(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g) ?? []).length,
  escapes: issue ? (text.replace(/\\\\/g, '').match(/\\/g) ?? []).length : 0,
});

/** Every rule line: a rule that names no script or file, or why not. */
const rulesShape = (text: string) => text.split('\n').filter(Boolean).map((line) => {
  if (/[\u0000-\u001f]/.test(line)) return 'CONTROL';
  if (!parseRuleLine(line)) return 'NOT-A-RULE';
  return /(lua|luajit|dataset|datarep|filemd5|filesha1|filesha256)\s*:/i.test(line) ? 'SCRIPT-OR-FILE' : 'rule';
});

/** Replaces a marker string (in values and keys) in a parsed YAML tree. */
function substitute(tree: unknown, from: string, to: string): unknown {
  if (typeof tree === 'string') return tree === from ? to : tree;
  if (Array.isArray(tree)) return tree.map((item) => substitute(item, from, to));
  if (tree && typeof tree === 'object') return Object.fromEntries(Object.entries(tree).map(([k, v]) => [k === from ? to : k, substitute(v, from, to)]));
  return tree;
}
const contains = (tree: unknown, marker: string): boolean =>
  typeof tree === 'string' ? tree === marker : Array.isArray(tree) ? tree.some((i) => contains(i, marker)) : tree && typeof tree === 'object' ? Object.entries(tree).some(([k, v]) => k === marker || contains(v, marker)) : false;

// ---- the app and its targets -------------------------------------------------------------------------

let t: AreaApp;
const targets = new Map<string, Target>();
before(async () => {
  t = await startAreaApp();
  await setUp();
});
after(() => t.close());

const ok = async (response: Promise<LightMyRequestResponse>) => {
  const res = await response;
  assert.ok(res.statusCode < 300, `${res.statusCode} ${res.body}`);
  return res.statusCode === 204 ? undefined : json(res);
};
const read = (...parts: string[]) => readFileSync(join(t.dataDir, ...parts), 'utf8');

async function setUp(): Promise<void> {
  // VPN: one tunnel with one peer; both rendered files and both client files are checked.
  const tunnel = await ok(t.request('POST', '/api/v1/vpn/wg', { name: 'office', listen_port: 51820, address: '10.8.0.1/24', dns: '10.8.0.1', endpoint_host: 'vpn.example.org', split_routes: '10.8.0.0/24' }));
  const peer = await ok(t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: 'auto', auto_generate_key: true, name: 'laptop', endpoint: 'peer.example.org:51820', preshared_key: 'generate' }));
  const renderVpn = async () => {
    await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/stop`);
    const started = await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/start`);
    assert.equal(started.statusCode, 200, started.body);
    const files = [read('wireguard', 'wg0.conf')];
    for (const variant of ['full', 'split']) {
      const res = await t.request('GET', `/api/v1/vpn/wg/${tunnel.id}/peers/${peer.id}/config?format=conf&variant=${variant}&include_keys=true`);
      assert.equal(res.statusCode, 200, res.body);
      files.push(res.body);
    }
    return files.join('\n#---\n');
  };
  const vpnShape = (text: string) => text.split('\n#---\n').map(iniShape);
  for (const [field, benign] of [['name', 'office'], ['address', '10.8.0.1/24'], ['dns', '10.8.0.1'], ['listen_interface', 'eth0'], ['split_routes', '10.8.0.0/24'], ['endpoint_host', 'vpn.example.org'], ['private_key', 'yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=']] as const) {
    targets.set(`wg_tunnel.${field}`, { field: `body.${field}`, write: (value) => t.request('PUT', `/api/v1/vpn/wg/${tunnel.id}`, { [field]: value }), render: renderVpn, shape: vpnShape, variants: simple(benign) });
  }
  for (const [field, benign] of [['name', 'laptop'], ['endpoint', 'peer.example.org:51820'], ['allowed_ips', '10.8.0.2/32'], ['preshared_key', 'generate']] as const) {
    targets.set(`wg_peer.${field}`, { field: `body.${field}`, write: (value) => t.request('PUT', `/api/v1/vpn/wg/${tunnel.id}/peers/${peer.id}`, { [field]: value }), render: renderVpn, shape: vpnShape, variants: simple(benign) });
  }
  // A new peer's public key: created and removed again each time.
  let extraPeer: string | null = null;
  targets.set('wg_peer.public_key', {
    field: 'body.public_key',
    write: async (value) => {
      if (extraPeer) await t.request('DELETE', `/api/v1/vpn/wg/${tunnel.id}/peers/${extraPeer}`);
      extraPeer = null;
      const res = await t.request('POST', `/api/v1/vpn/wg/${tunnel.id}/peers`, { allowed_ips: '10.8.0.50/32', public_key: value });
      if (res.statusCode === 201) extraPeer = json(res).id;
      return res;
    },
    render: renderVpn, shape: vpnShape, variants: simple('xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg='),
  });

  // IPsec: one SA (ESP and AH, so every proposal list is rendered) in swanctl.conf.
  const sa = await ok(t.request('POST', '/api/v1/vpn/ipsec', {
    name: 'branch', local_addr: '198.51.100.1', remote_addr: '203.0.113.9', protocol: 'esp_ah', mode: 'tunnel', psk: 'benign-shared-key-0001',
    local_id: 'gw.example.org', remote_id: 'branch.example.org', local_ts: '10.1.0.0/16', remote_ts: '10.9.0.0/24',
  }));
  const renderIpsec = async () => read('ipsec', 'swanctl', 'swanctl.conf');
  for (const [field, benign] of [['local_addr', '198.51.100.1'], ['remote_addr', '203.0.113.9'], ['local_id', 'gw.example.org'], ['remote_id', 'branch.example.org'],
    ['local_ts', '10.1.0.0/16'], ['remote_ts', '10.9.0.0/24'], ['ike_proposals', 'aes256-sha256-modp2048'], ['esp_proposals', 'aes256gcm16'], ['ah_proposals', 'sha256'],
    ['psk', 'benign-shared-key-0001']] as const) {
    targets.set(`ipsec_sa.${field}`, { field: `body.${field}`, write: (value) => t.request('PUT', `/api/v1/vpn/ipsec/${sa.id}`, { [field]: value }), render: renderIpsec, shape: swanctlShape, variants: simple(benign) });
  }

  // Reverse proxy: one object of every kind, rendered into config.yaml.
  const rp = '/api/v1/reverse-proxy';
  const objects: [string, string, Record<string, unknown>][] = [
    ['rp_entrypoint', 'entrypoints', { name: 'web', address: ':80', config_json: '{"forwardedHeaders":{"insecure":false}}' }],
    ['rp_http_service', 'http/services', { name: 'svc', service_type: 'loadBalancer', config_json: '{"servers":[{"url":"http://10.0.0.5:8080"}]}' }],
    ['rp_http_middleware', 'http/middlewares', { name: 'mw', middleware_type: 'headers', config_json: '{"customRequestHeaders":{"X-A":"b"}}' }],
    ['rp_tls_option', 'tls/options', { name: 'opt', config_json: '{"minVersion":"VersionTLS12"}' }],
    ['rp_cert_resolver', 'cert-resolvers', { name: 'le', config_json: '{"acme":{"email":"a@example.org","storage":"/var/lib/bulwark/acme.json","httpChallenge":{"entryPoint":"web"}}}' }],
    ['rp_http_router', 'http/routers', { name: 'r', rule: 'Host(`example.org`)', service: 'svc', entry_points: '["web"]', middlewares: '["mw"]', tls_json: '{"options":"opt"}' }],
    ['rp_l4_service', 'tcp/services', { name: 'tsvc', config_json: '{"servers":[{"address":"10.0.0.5:5432"}]}' }],
    ['rp_tcp_router', 'tcp/routers', { name: 'tr', rule: 'HostSNI(`*`)', service: 'tsvc', entry_points: 'web', tls_json: '{"passthrough":true}' }],
    ['rp_udp_service', 'udp/services', { name: 'usvc', config_json: '{"servers":[{"address":"10.0.0.5:53"}]}' }],
    ['rp_udp_router', 'udp/routers', { name: 'ur', service: 'usvc', entry_points: 'web' }],
    ['rp_tls_cert', 'tls/certs', { name: 'site', cert_file: '/etc/ssl/site.pem', key_file: '/etc/bulwark/site.key', stores_json: '["default"]' }],
  ];
  // The proxy's sample back ends sit on a private LAN, which only the administrator's outbound allow-list opens.
  await ok(t.request('PUT', '/api/v1/settings/outbound', { allowed_addresses: ['10.0.0.0/8'] }));
  await ok(t.request('PUT', `${rp}/config`, { metrics_enabled: true, access_log_enabled: true }));
  const renderProxy = async () => {
    const res = await t.request('POST', `${rp}/apply`);
    assert.equal(res.statusCode, 200, res.body);
    return readFileSync(json(res).path, 'utf8');
  };
  const JSON_FIELDS = new Set(['config_json', 'tls_json']);
  const ARRAY_FIELDS = new Set(['entry_points', 'middlewares', 'stores_json']);
  for (const [kind, path, body] of objects) {
    const created = await ok(t.request('POST', `${rp}/${path}`, body));
    const schemaKind = kind === 'rp_udp_service' ? 'rp_l4_service' : kind;
    for (const [field, benign] of Object.entries(body)) {
      if (typeof benign !== 'string') continue;
      const variants = JSON_FIELDS.has(field)
        ? (hostile: string): Variant[] => [
          { value: hostile, twin: benign, mustRefuse: true },
          { value: JSON.stringify({ x: hostile }), twin: JSON.stringify({ x: 'BENIGN' }), from: 'BENIGN', to: hostile },
          { value: JSON.stringify({ [hostile]: 'v' }), twin: JSON.stringify({ BENIGN: 'v' }), from: 'BENIGN', to: hostile },
          { value: JSON.stringify({ usersFile: `/etc/${hostile}` }), twin: JSON.stringify({ x: 'BENIGN' }), mustRefuse: true },
          { value: JSON.stringify({ x: { caFiles: [`/root/${hostile}`] } }), twin: JSON.stringify({ x: 'BENIGN' }), mustRefuse: true },
        ]
        : ARRAY_FIELDS.has(field) && field !== 'entry_points' ? (hostile: string): Variant[] => [
          { value: hostile, twin: benign, mustRefuse: true },
          { value: JSON.stringify([hostile]), twin: benign, mustRefuse: true },
        ] : simple(benign);
      const entry: Target = {
        field: `body.${field}`, write: (value) => t.request('PUT', `${rp}/${path}/${created.id}`, { [field]: value }), render: renderProxy, shape: () => null, variants, yaml: true,
      };
      if (schemaKind !== 'rp_udp_router' || field !== 'rule') targets.set(`${schemaKind}.${field}`, entry);
    }
  }
  // A certificate by reference (source: ca:<id>), written into the YAML as the reference itself.
  await ok(t.request('POST', '/api/v1/ca', {}));
  const caCert = await ok(t.request('POST', '/api/v1/ca/certs', { cert_type: 'server', common_name: 'site.example.org', sans: [] }));
  const bySource = await ok(t.request('POST', `${rp}/tls/certs`, { name: 'bysource', source: `ca:${caCert.id}` }));
  targets.set('rp_tls_cert.source', { field: 'body.source', write: (value) => t.request('PUT', `${rp}/tls/certs/${bySource.id}`, { source: value }), render: renderProxy, shape: () => null, variants: simple(`ca:${caCert.id}`), yaml: true });
  for (const [field, benign] of [['access_log_path', '/var/log/bulwark/reverse-proxy/access.log'], ['metrics_address', '127.0.0.1:8082'], ['log_level', 'INFO'], ['access_log_format', 'common']] as const) {
    targets.set(`rp_config.${field}`, { field: `body.${field}`, write: (value) => t.request('PUT', `${rp}/config`, { [field]: value }), render: renderProxy, shape: () => null, variants: simple(benign), yaml: true });
  }

  // IDS: rules text of a ruleset, suppressions; rendered by POST /ids/reload.
  const ruleset = await ok(t.request('POST', '/api/v1/ids/rulesets', { name: 'custom', rule_format: 'suricata', rules_text: '' }));
  const renderIds = async () => {
    const res = await t.request('POST', '/api/v1/ids/reload');
    assert.equal(res.statusCode, 200, res.body);
    return `${read('ids', 'bulwark.rules')}\n#---\n${read('ids', 'threshold.config')}`;
  };
  const idsShape = (text: string) => {
    const [rules, threshold] = text.split('\n#---\n');
    return { rules: rulesShape(rules), threshold: lineShape(threshold) };
  };
  const rule = (options: string) => `alert tcp any any -> any any (${options}; sid:1000001; rev:1;)`;
  targets.set('ids_ruleset.rules_text', {
    field: 'body.rules_text', write: (value) => t.request('PUT', `/api/v1/ids/rulesets/${ruleset.id}`, { rules_text: value }), render: renderIds, shape: idsShape,
    variants: (hostile) => [
      { value: hostile, twin: '' },
      { value: rule(`msg:"${hostile}"`), twin: rule('msg:"benign"') },
      { value: rule(`msg:"x"; ${hostile}`), twin: rule('msg:"x"') },
      { value: rule(`msg:"x"; lua:${hostile}.lua`), twin: rule('msg:"x"') },
      { value: rule(`msg:"x"; dataset:isset,${hostile},type string,load /etc/shadow`), twin: rule('msg:"x"') },
      { value: rule(`msg:"x\\"; luajit:evil.lua; \\""`), twin: rule('msg:"x"') },
    ],
  });
  targets.set('ids_rule.action_override', {
    field: 'body.action_override',
    write: async (value) => {
      // The rules_text cases reinstall the ruleset, which gives its rules new ids.
      await ok(t.request('PUT', `/api/v1/ids/rulesets/${ruleset.id}`, { rules_text: rule('msg:"x"') }));
      const ruleId = json(await t.request('GET', `/api/v1/ids/rules?ruleset_id=${ruleset.id}`))[0].id;
      return t.request('PUT', `/api/v1/ids/rules/${ruleId}`, { action_override: value });
    },
    render: renderIds, shape: idsShape, variants: simple('drop'),
  });
  const clearSuppressions = async () => {
    for (const item of json(await t.request('GET', '/api/v1/ids/suppressions'))) await t.request('DELETE', `/api/v1/ids/suppressions/${item.id}`);
  };
  targets.set('ids_suppression.ip_cidr', {
    field: 'body.ip_cidr',
    write: async (value) => {
      await clearSuppressions();
      return t.request('POST', '/api/v1/ids/suppressions', { sid: 1000001, suppress_type: 'src', ip_cidr: value });
    },
    render: renderIds, shape: idsShape, variants: simple('10.0.0.0/8'),
  });

  // System: the PUT renders the files.
  await ok(t.request('PUT', '/api/v1/system/general', { hostname: 'fw1', domain: 'example.org', timezone: 'UTC' }));
  const generalFiles = async () => ['hostname', 'hosts', 'timezone', 'resolv.search'].map((name) => (existsSync(join(t.dataDir, 'system', name)) ? read('system', name) : '')).join('\n#---\n');
  for (const [field, benign] of [['hostname', 'fw1'], ['domain', 'example.org'], ['timezone', 'UTC']] as const) {
    targets.set(`system_general.${field}`, { field: `body.${field}`, write: (value) => t.request('PUT', '/api/v1/system/general', { [field]: value }), render: generalFiles, shape: (text) => text.split('\n#---\n').map(lineShape), variants: simple(benign) });
  }
  for (const [field, file] of [['login_banner', 'issue'], ['motd', 'motd']] as const) {
    targets.set(`system_banner.${field}`, { field: `body.${field}`, write: (value) => t.request('PUT', '/api/v1/system/banner', { [field]: value }), render: async () => read('system', file), shape: textShape(file === 'issue'), variants: simple('Welcome') });
  }
  targets.set('system_console.kind', { field: 'body.kind', write: (value) => t.request('PUT', '/api/v1/system/console', { kind: value }), render: async () => read('system', 'kernel-console.args'), shape: lineShape, variants: simple('serial') });
  targets.set('settings_log_rotation.compression', { field: 'body.compression', write: (value) => t.request('PUT', '/api/v1/settings/log-rotation', { compression: value }), render: async () => read('logrotate.conf'), shape: lineShape, variants: simple('gzip') });
  targets.set('dns_system.servers', { field: 'body.servers', write: (value) => t.request('PUT', '/api/v1/dns', { servers: [value] }), render: async () => read('dns', 'resolv.conf'), shape: lineShape, variants: simple('9.9.9.9') });

  // Multi-WAN: a gateway, a policy steering to it and a leak; rendered into the platform's anchors (pf) and
  // the Linux table, rules and routes (nftables, areas/multiwan/compile-nftables.ts).
  const mw = '/api/v1/multiwan';
  const instances = json(await t.request('GET', `${mw}/instances`));
  const gateway = await ok(t.request('POST', `${mw}/gateways`, { name: 'isp1', instance_id: instances[0].id, interface: 'eth1', next_hop: '192.0.2.1' }));
  const policy = await ok(t.request('POST', `${mw}/policies`, { priority: 10, name: 'voip', action_kind: 'set_gateway', target_id: gateway.id, protocol: 'udp', src_addr: '10.0.0.0/24', dst_port: '5060', iface_in: 'eth0' }));
  const renderAnchors = async () => {
    const res = await t.request('POST', `${mw}/apply`);
    assert.equal(res.statusCode, 200, res.body);
    const anchors = await t.app.context.platform.routing.anchors();
    // The same objects compiled for Linux: the multi-WAN nftables table, its ip rules and gateway routes.
    const doc = json(await t.request('GET', `${mw}/config.yaml?format=json`));
    const plan = compileLinuxRouting({
      policies: doc.policies, leaks: doc.leaks, instanceMembers: doc.instance_members, members: doc.group_members,
      instances: new Map(doc.instances.map((i: { id: string }) => [i.id, i])),
      gateways: new Map(doc.gateways.map((g: { id: string }) => [g.id, { ...g, state: 'up', last_mos: null }])),
      groups: new Map(doc.groups.map((g: { id: string }) => [g.id, g])),
    });
    const linux = [plan.nft, plan.rules.map((rule) => ruleWords(rule).join(' ')).join('\n'), plan.routes.map((r) => `${r.table} ${r.via} ${r.dev}`).join('\n')].join('\n');
    return [...Object.keys(anchors).sort().map((name) => anchors[name]), linux].join('\n#---\n');
  };
  const anchorShape = (text: string) => text.split('\n#---\n').map(lineShape);
  for (const [field, benign] of [['iface_in', 'eth0'], ['src_addr', '10.0.0.0/24'], ['dst_addr', 'any'], ['src_port', '1024:2048'], ['dst_port', '5060']] as const) {
    targets.set(`mw_policy.${field}`, { field: `body.${field}`, write: (value) => t.request('PUT', `${mw}/policies/${policy.id}`, { [field]: value }), render: renderAnchors, shape: anchorShape, variants: simple(benign) });
  }
  for (const [field, benign] of [['interface', 'eth1'], ['next_hop', '192.0.2.1']] as const) {
    targets.set(`mw_gateway.${field}`, { field: `body.${field}`, write: (value) => t.request('PUT', `${mw}/gateways/${gateway.id}`, { [field]: value }), render: renderAnchors, shape: anchorShape, variants: simple(benign) });
  }
  const dstInstance = instances[0].id;
  const clearLeaks = async () => {
    for (const item of json(await t.request('GET', `${mw}/leaks`))) await t.request('DELETE', `${mw}/leaks/${item.id}`);
  };
  for (const [field, benign] of [['prefix', '10.20.0.0/16'], ['ports', '443']] as const) {
    targets.set(`mw_leak.${field}`, {
      field: `body.${field}`,
      write: async (value) => {
        await clearLeaks();
        return t.request('POST', `${mw}/leaks`, { name: 'l', src_instance_id: instances[0].id, dst_instance_id: dstInstance, prefix: '10.20.0.0/16', ports: '443', [field]: value });
      },
      render: renderAnchors, shape: anchorShape, variants: simple(benign),
    });
  }

  // ACME file export targets: only a refusal is acceptable for a hostile path or mode.
  await ok(t.request('POST', '/api/v1/acme/dns-providers', { name: 'by-hand', kind: 'manual', zone: 'example.org' }));
  const provider = json(await t.request('GET', '/api/v1/acme/dns-providers'))[0];
  const cert = await ok(t.request('POST', '/api/v1/acme/certs', { common_name: 'www.example.org', dns_provider_id: provider.id }));
  const fileTarget = { cert_path: '/etc/ssl/bulwark/www.pem', key_path: '/etc/ssl/bulwark/www.key', chain_path: '/etc/ssl/bulwark/chain.pem', mode: '0644', key_mode: '0600', owner: 'root' };
  for (const field of Object.keys(fileTarget)) {
    targets.set(`acme_export_target.config.${field}`, {
      field: `body.config.${field}`, onlyRefusal: true,
      write: (value) => t.request('POST', `/api/v1/acme/certs/${cert.id}/targets`, { kind: 'file', config: { ...fileTarget, [field]: value } }),
      render: async () => '', shape: () => null, variants: simple(fileTarget[field as keyof typeof fileTarget]),
    });
  }
}

// ---- the properties ----------------------------------------------------------------------------------

test('every string field of these areas is either exercised with hostile values or listed as not rendered, with a reason', () => {
  const { open, closed } = stringFields();
  const missing = open.filter((field) => !targets.has(field) && !NOT_RENDERED[field]);
  assert.deepEqual(missing, [], `string fields neither exercised nor listed as not rendered: ${missing.join(', ')}`);
  const stale = Object.keys(NOT_RENDERED).filter((field) => !open.includes(field));
  assert.deepEqual(stale, [], `NOT_RENDERED names fields that are not open string fields: ${stale.join(', ')}`);
  const both = [...targets.keys()].filter((field) => NOT_RENDERED[field]);
  assert.deepEqual(both, []);
  // Closed fields (enum or UUID) accept no free text; they are named so a change to free text fails here.
  assert.ok(closed.includes('rp_http_service.service_type') && closed.includes('mw_policy.protocol'));
});

test('hostile values in every rendered field: 400 naming the field, or the file keeps exactly the intended directives', async () => {
  let refused = 0;
  let accepted = 0;
  for (const [name, target] of targets) {
    for (const hostile of HOSTILE) {
      for (const variant of target.variants(hostile)) {
        const twinWrite = await target.write(variant.twin);
        assert.ok(twinWrite.statusCode < 300, `${name}: the benign value ${JSON.stringify(variant.twin)} is refused: ${twinWrite.body}`);
        const expected = target.onlyRefusal ? null : await target.render();
        const res = await target.write(variant.value);
        const label = `${name} = ${JSON.stringify(variant.value)}`;
        if (res.statusCode === 400) {
          assert.ok(json(res).error.includes(target.field), `${label}: 400 must name ${target.field}: ${res.body}`);
          refused++;
          continue;
        }
        assert.ok(res.statusCode < 300, `${label}: ${res.statusCode} ${res.body}`);
        assert.ok(!target.onlyRefusal && !variant.mustRefuse, `${label}: accepted, but only a refusal is acceptable here`);
        const text = await target.render();
        if (target.yaml) {
          const { from, to } = variant;
          assert.ok(from !== undefined && to !== undefined, `${label}: a YAML variant needs its marker`);
          const twinTree = parseYaml(expected!);
          assert.ok(contains(twinTree, from), `${name}: the benign marker ${from} does not reach the rendered file`);
          assert.deepEqual(parseYaml(text), substitute(twinTree, from, to), `${label}: the YAML does not parse into the intended document`);
        }
        assert.deepEqual(target.shape(text), target.shape(expected!), `${label}: rendered structure differs from the benign rendering`);
        accepted++;
      }
    }
    // Leave the benign value in place for the next field.
    await target.write(target.variants('')[0].twin);
  }
  assert.ok(refused > 0 && accepted > 0, `both outcomes occur (refused ${refused}, accepted ${accepted})`);
});

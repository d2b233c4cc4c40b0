import { CLUSTER_SYNC_EXTENSIONS } from '../areas/cluster/sync-extensions.js';

/**
 * Operations this API offers beyond `endpoints.tsv` of the specification. Each one is listed here with its
 * permission and the reason it exists; the route-table test refuses any route that is in neither table, and the
 * OpenAPI document marks these operations as extensions.
 */
export interface ApiExtension {
  method: string;
  path: string;
  access: string;
  why: string;
}

const EDIT_WITH_IF_MATCH = 
  'Reads one object with its ETag, so an editor (the web console) can send it back as If-Match on PUT and get a 412 instead of overwriting a concurrent change.';

const DIAGNOSTIC_WHY = { ping: 'ping', traceroute: 'traceroute', dns: 'a DNS lookup through the box\'s resolver or a chosen server', tcp: 'a TCP port test' } as const;

export const API_EXTENSIONS: readonly ApiExtension[] = [
  { method: 'GET', path: '/api/v1/cluster/carp', access: 'ha:manage', why: "Issue 39: the virtual addresses (wire-format §10), run as keepalived VRRP instances on linux; the password is write-only." },
  { method: 'POST', path: '/api/v1/cluster/carp', access: 'ha:manage', why: "Issue 39: adds a virtual address (vhid → VRRP virtual router id); applied at once." },
  { method: 'GET', path: '/api/v1/cluster/carp/{id}', access: 'ha:manage', why: "Issue 39: one virtual address (password never returned)." },
  { method: 'PUT', path: '/api/v1/cluster/carp/{id}', access: 'ha:manage', why: "Issue 39: changes a virtual address; applied at once." },
  { method: 'DELETE', path: '/api/v1/cluster/carp/{id}', access: 'ha:manage', why: "Issue 39: removes a virtual address; applied at once." },
  { method: 'GET', path: '/api/v1/cluster/pfsync', access: 'ha:manage', why: "Issue 39: connection state sync (conntrackd FTFW to the peer on linux), or null." },
  { method: 'PUT', path: '/api/v1/cluster/pfsync', access: 'ha:manage', why: "Issue 39: sets connection state sync; applied at once." },
  { method: 'GET', path: '/api/v1/cluster/health', access: 'ha:manage', why: "Issue 39: health checks that lower this node's VRRP priority while they fail." },
  { method: 'POST', path: '/api/v1/cluster/health', access: 'ha:manage', why: "Issue 39: adds a health check (ping, tcp_port, pf_status)." },
  { method: 'GET', path: '/api/v1/cluster/health/{id}', access: 'ha:manage', why: "Issue 39: one health check." },
  { method: 'PUT', path: '/api/v1/cluster/health/{id}', access: 'ha:manage', why: "Issue 39: changes a health check." },
  { method: 'DELETE', path: '/api/v1/cluster/health/{id}', access: 'ha:manage', why: "Issue 39: removes a health check." },
  { method: 'POST', path: '/api/v1/cluster/health/run', access: 'ha:manage', why: "Issue 39: runs every health check now (202)." },
  { method: 'GET', path: '/api/v1/cluster/role', access: 'ha:manage', why: "Issue 39: this node's role in the pair (node-local; the reference reads it from rc.conf)." },
  { method: 'PUT', path: '/api/v1/cluster/role', access: 'ha:manage', why: "Issue 39: sets this node's role (primary, secondary, standalone); the VRRP priority follows it." },
  { method: 'GET', path: '/api/v1/cluster/status', access: 'ha:manage', why: "Issue 39: live role from the VRRP state, peer reachability, synced state count and sync errors." },
  { method: 'POST', path: '/api/v1/cluster/promote', access: 'ha:manage', why: "Issue 39: clears a demotion on the primary, raises the priority by 100 on the secondary: this node takes the virtual addresses." },
  { method: 'POST', path: '/api/v1/cluster/demote', access: 'ha:manage', why: "Issue 39: lowers this node's VRRP priority by 240 (gives the virtual addresses away)." },
  ...CLUSTER_SYNC_EXTENSIONS,
  { method: 'POST', path: '/api/v1/fleet/enrol', access: 'settings:write', why: "Issue 35: enrols the appliance with a fleet controller (a single-use token; the appliance dials out and keeps one mutually authenticated connection)." },
  { method: 'GET', path: '/api/v1/fleet/agent', access: 'settings:read', why: "Issue 35: the fleet agent's enrolment, connection and the revisions it attempted with their outcomes." },
  { method: 'GET', path: '/api/v1/cluster/failover-history', access: 'ha:manage', why: "Issue 39: role changes of the last 24 h (VRRP transitions, promote, demote, role settings), persisted." },
  { method: 'GET', path: '/api/v1/cluster/health-summary', access: 'ha:manage', why: "Issue 39: failing checks, daemons not running, sync errors, peer, demotion; from the live checks." },
  {
    method: 'PUT', path: '/api/v1/plugins/{name}/provided/entries', access: 'aliases:write',
    why: "Issue 38: a running plugin feeds the addresses of the `plugin` aliases that name it (only with its own key); the kernel sets follow at once.",
  },
  {
    method: 'PUT', path: '/api/v1/plugins/{name}/provided/findings', access: 'rules:read',
    why: "Issue 38: a running plugin replaces its findings about rules (rule id, severity, plain text), shown in GET /rules/analysis marked with it (only with its own key); a plugin that analyses rules reads them, so rules:read suffices.",
  },
  {
    method: 'POST', path: '/api/v1/plugins/{name}/deliveries', access: 'plugins:read',
    why: "Issue 38: a running plugin (webhook-notifier) posts an event to the webhook of its own settings (only with its own key): signed, through the outbound guard, with retries.",
  },
  {
    method: 'GET', path: '/api/v1/updates/preview', access: 'updates:read',
    why: 'Issue 38: installing OS updates with a preview: what apt-get -s upgrade would change (upgrades, new packages, removals), without changing anything.',
  },
  {
    method: 'POST', path: '/api/v1/updates/schedule/run', access: 'updates:install',
    why: "Issue 38: the maintenance window is run by Bulwark's own scheduler; this runs its steps now (and lets a test prove the executor).",
  },
  {
    method: 'GET', path: '/api/v1/auth/register', access: 'public',
    why: 'Tells a sign-in page whether first-boot registration is open, without attempting a registration.',
  },
  {
    method: 'GET', path: '/api/v1/vpn/ipsec/{id}', access: 'vpn:read',
    why: 'Reads one IPsec SA, as every other collection of the API can be read item by item.',
  },
  {
    method: 'GET', path: '/api/v1/vpn/ipsec/status', access: 'vpn:read',
    why: 'Live IKE and CHILD SA state from charon (swanctl --list-sas) for every SA; kept out of the list so its ETag still describes configuration only.',
  },
  {
    method: 'GET', path: '/api/v1/rules/wan-default-block', access: 'rules:read',
    why: 'Whether new connections entering a WAN-role interface are blocked unless a rule passes them (a fresh linux/freebsd appliance is not open, as pfSense and OPNsense ship); the specification has no default-policy setting.',
  },
  {
    method: 'PUT', path: '/api/v1/rules/wan-default-block', access: 'rules:write',
    why: 'Turns the WAN default block on or off (compiled into nftables and pf, shown in /rules/system, honoured by /rules/simulate; takes effect at the next apply).',
  },
  { method: 'GET', path: '/api/v1/schedules/{id}', access: 'rules:read', why: EDIT_WITH_IF_MATCH },
  { method: 'GET', path: '/api/v1/dns/resolver/hosts/{id}', access: 'dns:read', why: EDIT_WITH_IF_MATCH },
  { method: 'GET', path: '/api/v1/dns/resolver/domains/{id}', access: 'dns:read', why: EDIT_WITH_IF_MATCH },
  { method: 'GET', path: '/api/v1/dns/resolver/acls/{id}', access: 'dns:read', why: EDIT_WITH_IF_MATCH },
  { method: 'GET', path: '/api/v1/dhcp/v4/subnets/{id}', access: 'dhcp:read', why: EDIT_WITH_IF_MATCH },
  { method: 'GET', path: '/api/v1/dhcp/v4/reservations/{id}', access: 'dhcp:read', why: EDIT_WITH_IF_MATCH },
  { method: 'GET', path: '/api/v1/vlans/{id}', access: 'interfaces:read', why: EDIT_WITH_IF_MATCH },
  { method: 'GET', path: '/api/v1/routes/{id}', access: 'interfaces:read', why: EDIT_WITH_IF_MATCH },
  { method: 'GET', path: '/api/v1/time/sources/{id}', access: 'settings:read', why: EDIT_WITH_IF_MATCH },
  { method: 'GET', path: '/api/v1/auth/roles/{id}', access: 'users:read', why: EDIT_WITH_IF_MATCH },
  {
    method: 'POST', path: '/api/v1/geoip/refresh', access: 'geoip:write',
    why: 'Re-reads the country data (after the package that ships it was updated) and rebuilds the geo-IP sets of the ruleset in force; the specification gives geoip:write the refresh of geo data but no route for it.',
  },
  {
    method: 'POST', path: '/api/v1/rules/simulate', access: 'rules:read',
    why: 'Packet simulation: the verdict and a rule-by-rule trace (NAT, aliases, schedules, quick/last match) for a packet, from the compiled ruleset; changes nothing, so reading rules suffices.',
  },
  {
    method: 'GET', path: '/api/v1/rules/analysis', access: 'rules:read',
    why: 'Rule analysis by set arithmetic: rules that never match (shadowed), redundant and conflicting rules, empty aliases in use, schedules that never fire, rules unused for N days.',
  },
  {
    method: 'GET', path: '/api/v1/settings/tls/status', access: 'settings:read',
    why: 'The HTTPS listener and the certificate new connections get now (source, serial, names, expiry), and why a selected one is not served; kept out of /settings/tls so its ETag describes the settings only (issue 37).',
  },
  {
    method: 'GET', path: '/api/v1/settings/outbound', access: 'settings:read',
    why: 'The administrator\'s outbound allow-list: the loopback, private or special addresses that destinations an operator writes (reverse-proxy upstreams, blocklist sources, object storage, gateway probes) may reach (docs/security.md).',
  },
  {
    method: 'PUT', path: '/api/v1/settings/outbound', access: 'settings:write',
    why: 'Changes the outbound allow-list; only settings:write may, so an operator cannot allow-list the destinations it writes (issue 31 item 3).',
  },
  {
    method: 'GET', path: '/api/v1/metrics/prometheus', access: 'dashboard:view',
    why: 'The appliance\'s figures in the Prometheus text exposition format for a monitoring server to scrape (issue 40 item 4); an API key holding dashboard:view suffices.',
  },
  {
    method: 'GET', path: '/api/v1/settings/flow-export', access: 'settings:read',
    why: 'Flow export (NetFlow v9 / IPFIX, issue 40 item 3): collectors, protocol, timeouts, sampling and interfaces, with the exporters\' live state.',
  },
  {
    method: 'PUT', path: '/api/v1/settings/flow-export', access: 'settings:write',
    why: 'Changes flow export and applies it at once; collectors pass the outbound guard (special addresses only via /settings/outbound).',
  },
  {
    method: 'POST', path: '/api/v1/changes', access: 'authenticated',
    why: 'Atomic change sets: create/update/delete operations on any collections and settings sections applied all or none in one transaction (dry run answers the diff); each operation is held to the write permission of its own route.',
  },
  ...(['GET', 'POST'] as const).map((method) => ({
    method, path: '/api/v1/notify/webhooks', access: method === 'GET' ? 'settings:read' : 'settings:write',
    why: 'Webhook channels for notifications (issue 40): name, url, a write-only sealed secret that signs each body (X-Bulwark-Signature), and the private addresses the outbound guard may reach.',
  })),
  ...(['GET', 'PUT', 'DELETE'] as const).map((method) => ({
    method, path: '/api/v1/notify/webhooks/{id}', access: method === 'GET' ? 'settings:read' : 'settings:write',
    why: 'One webhook channel of notifications (issue 40).',
  })),
  {
    method: 'POST', path: '/api/v1/notify/webhooks/{id}/test', access: 'settings:write',
    why: 'Sends a signed test notification to a webhook, as POST /notify/smtp/test does for e-mail.',
  },
  ...(['GET', 'PUT'] as const).map((method) => ({
    method, path: '/api/v1/notify/events', access: method === 'GET' ? 'settings:read' : 'settings:write',
    why: 'Which events (gateway down/up, IDS alerts, certificates, drift, rollbacks, lockouts, daemons, updates, disk) reach which channel, with a minimum severity and a rate limit per event key.',
  })),
  {
    method: 'GET', path: '/api/v1/reverse-proxy/tls/key-files', access: 'proxy:read',
    why: 'Reads the key files beyond Bulwark\'s own store that reverse-proxy TLS certificates may name (Bulwark copies the key for the proxy\'s user, so other keys need an administrator\'s consent).',
  },
  {
    method: 'PUT', path: '/api/v1/reverse-proxy/tls/key-files', access: 'settings:write',
    why: 'Names key files under the certificate directories that proxy:write may then use for TLS certificates; only settings:write may hand other daemons\' or the system\'s keys to the proxy.',
  },
  ...(['ping', 'traceroute', 'dns', 'tcp'] as const).map((tool) => ({
    method: 'POST', path: `/api/v1/diagnostics/${tool}`, access: 'interfaces:write',
    why: `Diagnostics (issue 34 item 2): ${DIAGNOSTIC_WHY[tool]} from the box, run unprivileged with a validated argument vector and a time limit, output streamed; rate-limited per account. interfaces:write: sending probes from the firewall is network work a viewer does not do (docs/diagnostics.md).`,
  })),
  {
    method: 'POST', path: '/api/v1/diagnostics/capture', access: 'interfaces:write',
    why: 'Diagnostics (issue 34 item 2): a packet capture on an interface with a filter built from fields (protocol, host, port), a duration and a size cap, answered as a pcap file; tcpdump drops to nobody. interfaces:write, as its holder can already redirect that traffic (docs/diagnostics.md).',
  },
  {
    method: 'GET', path: '/api/v1/assertions', access: 'rules:read',
    why: 'Assertions (issue 33): what must stay true of the network, each with its last result, when, and what decided it.',
  },
  { method: 'POST', path: '/api/v1/assertions', access: 'rules:write', why: 'Creates an assertion: transit (judged by the packet simulator before every apply) or probe (run by the box after an apply and on a schedule).' },
  { method: 'GET', path: '/api/v1/assertions/{id}', access: 'rules:read', why: EDIT_WITH_IF_MATCH },
  { method: 'PUT', path: '/api/v1/assertions/{id}', access: 'rules:write', why: 'Changes an assertion (fields not sent are kept).' },
  { method: 'DELETE', path: '/api/v1/assertions/{id}', access: 'rules:write', why: 'Deletes an assertion.' },
  {
    method: 'POST', path: '/api/v1/assertions/run', access: 'rules:write',
    why: 'Judges every enabled assertion now (transit against the stored configuration, probes run by the box) and answers each result; probes send traffic, so it needs the write permission.',
  },
];

/** Paths the server serves that are not API operations: the API documentation and the web console. */
export const SERVED_FILE_PATHS: readonly RegExp[] = [/^\/api\/docs(\/|$)/, /^\/api\/v1\/openapi\.json$/, /^\/assets\//, /^\/\*$/];

export function extensionOf(method: string, path: string): ApiExtension | undefined {
  return API_EXTENSIONS.find((extension) => extension.method === method && extension.path === path);
}

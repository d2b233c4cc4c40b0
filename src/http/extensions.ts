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

export const API_EXTENSIONS: readonly ApiExtension[] = [
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
];

/** Paths the server serves that are not API operations: the API documentation and the web console. */
export const SERVED_FILE_PATHS: readonly RegExp[] = [/^\/api\/docs(\/|$)/, /^\/api\/v1\/openapi\.json$/, /^\/assets\//, /^\/\*$/];

export function extensionOf(method: string, path: string): ApiExtension | undefined {
  return API_EXTENSIONS.find((extension) => extension.method === method && extension.path === path);
}

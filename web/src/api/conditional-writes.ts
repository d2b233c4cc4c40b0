/**
 * The PUT operations whose answer to a stale `If-Match` is 412 (the API keeps an entity tag for them). Other PUTs
 * refuse the header with a 400, so the console sends it only to these. A path missing here still saves, without
 * the protection; `test/console-conditional-writes.test.ts` checks every entry against the OpenAPI document.
 */
export const PUT_TAKES_IF_MATCH: readonly string[] = [
  '/rules/{id}',
  '/rules/block-logging',
  '/schedules/{id}',
  '/aliases/{id}',
  '/nat/{id}',
  '/auth/settings',
  '/auth/oauth/providers/{id}',
  '/ids/config',
  '/multiwan/instances/{id}',
  '/multiwan/gateways/{id}',
  '/multiwan/policies/{id}',
  '/acme/dns-providers/{id}',
  '/dns/blocklists/{id}',
  '/dns/blocklists/schedule',
  '/dns/resolver/config',
  '/dns/resolver/hosts/{id}',
  '/dns/resolver/domains/{id}',
  '/dns/resolver/acls/{id}',
  '/dhcp/v4/config',
  '/dhcp/v4/subnets/{id}',
  '/dhcp/v4/reservations/{id}',
  '/dhcp/ha/config',
  '/time/config',
  '/time/sources/{id}',
  '/vlans/{id}',
  '/routes/{id}',
  '/ddns/records/{id}',
  '/ddns/config',
  '/settings/tls',
  '/settings/syslog',
  '/updates/schedule',
];

/** `{id}` in a template stands for one path segment. */
const patterns = PUT_TAKES_IF_MATCH.map((template) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`));

/** Whether a PUT to this concrete API path (relative to /api/v1) may carry If-Match. */
export function putTakesIfMatch(path: string): boolean {
  return patterns.some((pattern) => pattern.test(path));
}

/**
 * What the console coverage test (test/console-coverage.test.ts, issue 34 item 5) accepts for an API operation that no
 * console page calls. An entry names a group (`/time/config`: the path's first segment and, unless it is an id, its
 * second; see groupOf) or one operation (`GET /about`).
 *
 * - API_ONLY: operations that belong to scripts, devices or monitoring, not to an operator's screen, with the reason.
 * - NOT_YET_IN_CONSOLE: operations an operator does need, whose page is still to be built (issue 34 items 1, 2, 4).
 *   This is the console's to-do list, kept honest by the test: an entry must be taken off when a page starts using
 *   its group, and a new API operation fails the test until it gets a page or an entry here.
 */
export interface ApiOnlyEntry {
  operation: string;
  reason: string;
}

export const API_ONLY: readonly ApiOnlyEntry[] = [
  { operation: '/status', reason: 'monitoring and readiness probes; the dashboard receives the same figures over the /ws socket' },
  { operation: '/settings', reason: 'the generic GET/PUT /settings/{section}; the console uses each section by its own route' },
  { operation: '/ca/cert.pem', reason: 'the local CA certificate fetched by devices and browsers that must trust it, by URL' },
  { operation: '/ca/crl', reason: 'the revocation list fetched by TLS clients from its distribution point, not read by a person' },
  { operation: '/multiwan/config.yaml', reason: 'configuration as code: exported by scripts and version control, not edited in a form' },
  { operation: '/multiwan/apply-yaml', reason: 'configuration as code: the import side of config.yaml, for scripts' },
  { operation: '/auth/permissions', reason: 'the catalogue of permission names for API clients composing roles programmatically' },
  { operation: '/config/check', reason: 'a drift check for monitoring; the console shows pending and drifted state in its banner' },
];

export const NOT_YET_IN_CONSOLE: readonly ApiOnlyEntry[] = [
];

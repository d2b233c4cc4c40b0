import type { Area } from './area.js';
import { authArea } from './auth/routes.js';
import { statusArea } from './status/routes.js';
import { packetFilterArea } from './packet-filter/routes.js';
import { ssoArea } from './sso/routes.js';
import { vpnArea } from './vpn/routes.js';
import { caArea } from './ca/routes.js';
import { idsArea } from './ids/routes.js';
import { geoipArea } from './geoip/routes.js';
import { reverseProxyArea } from './reverse-proxy/routes.js';
import { multiwanArea } from './multiwan/routes.js';
import { aiArea } from './ai/routes.js';
import { acmeArea } from './acme/routes.js';
import { dashboardArea } from './dashboard/routes.js';
import { configArea } from './config/routes.js';

/** Every API area, in registration order. The config area stays last: its start-up commit-confirm rollback
 * needs every other area's applier registered. */
export const AREAS: Area[] = [
  authArea,
  statusArea,
  packetFilterArea,
  ssoArea,
  vpnArea,
  caArea,
  idsArea,
  geoipArea,
  reverseProxyArea,
  multiwanArea,
  aiArea,
  acmeArea,
  dashboardArea,
  configArea,
];

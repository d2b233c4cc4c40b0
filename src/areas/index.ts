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
import { dnsArea } from './dns/routes.js';
import { dhcpArea } from './dhcp/routes.js';
import { timeArea } from './time/routes.js';
import { networkingArea } from './networking/routes.js';
import { systemArea } from './system/routes.js';
import { settingsArea } from './settings/routes.js';
import { updatesArea } from './updates/routes.js';
import { pluginsArea } from './plugins/routes.js';
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
  dnsArea,
  dhcpArea,
  timeArea,
  networkingArea,
  systemArea,
  settingsArea,
  updatesArea,
  pluginsArea,
  configArea,
];

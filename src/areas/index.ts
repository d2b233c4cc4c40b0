import type { Area } from './area.js';
import { authArea } from './auth/routes.js';
import { statusArea } from './status/routes.js';
import { ssoArea } from './sso/routes.js';
import { dnsArea } from './dns/routes.js';
import { dhcpArea } from './dhcp/routes.js';
import { timeArea } from './time/routes.js';
import { networkingArea } from './networking/routes.js';
import { systemArea } from './system/routes.js';
import { settingsArea } from './settings/routes.js';
import { updatesArea } from './updates/routes.js';
import { pluginsArea } from './plugins/routes.js';

/** Every API area, in registration order. */
export const AREAS: Area[] = [
  authArea,
  statusArea,
  ssoArea,
  dnsArea,
  dhcpArea,
  timeArea,
  networkingArea,
  systemArea,
  settingsArea,
  updatesArea,
  pluginsArea,
];

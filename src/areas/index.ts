import type { Area } from './area.js';
import { authArea } from './auth/routes.js';
import { statusArea } from './status/routes.js';
import { ssoArea } from './sso/routes.js';
import { configArea } from './config/routes.js';

/** Every API area, in registration order. The config area stays last: its start-up commit-confirm rollback
 * needs every other area's applier registered. */
export const AREAS: Area[] = [authArea, statusArea, ssoArea, configArea];

import type { Area } from './area.js';
import { authArea } from './auth/routes.js';
import { statusArea } from './status/routes.js';
import { dashboardArea } from './dashboard/routes.js';

/** Every API area, in registration order. */
export const AREAS: Area[] = [authArea, statusArea, dashboardArea];

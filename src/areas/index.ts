import type { Area } from './area.js';
import { statusArea } from './status/routes.js';
import { packetFilterArea } from './packet-filter/routes.js';

/** Every API area, in registration order. */
export const AREAS: Area[] = [statusArea, packetFilterArea];

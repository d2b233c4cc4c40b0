import type { FastifyInstance } from 'fastify';
import type { Area } from '../../src/areas/area.js';
import type { createConfigArea } from '../../src/areas/config/routes.js';
import { createDashboardArea } from '../../src/areas/dashboard/routes.js';
import { createAuthArea } from '../../src/areas/auth/routes.js';
import { createStatusArea } from '../../src/areas/status/routes.js';
import type { DashboardOptions } from '../../src/areas/dashboard/service.js';
import type { AppContext } from '../../src/context.js';
import { newLiveFeeds } from '../../src/live/feeds.js';
import type { createIdsArea } from '../../src/areas/ids/routes.js';
import type { createPacketFilterArea } from '../../src/areas/packet-filter/routes.js';

/** One area of an app by name, as its create function returned it (tests reach its services through it). */
export function areaOf<T extends Area>(app: FastifyInstance, name: string): T {
  const area = app.areas.find((candidate) => candidate.name === name);
  if (!area) throw new Error(`no ${name} area in this app`);
  return area as T;
}

export const packetFilterOf = (app: FastifyInstance) => areaOf<ReturnType<typeof createPacketFilterArea>>(app, 'packet-filter').service;
export const configOf = (app: FastifyInstance) => areaOf<ReturnType<typeof createConfigArea>>(app, 'config');
export const idsOf = (app: FastifyInstance) => areaOf<ReturnType<typeof createIdsArea>>(app, 'ids').service;
export const dashboardOf = (app: FastifyInstance) => areaOf<ReturnType<typeof createDashboardArea>>(app, 'dashboard').service;

/** auth, status and a dashboard built with `options` on fresh feeds: the areas the dashboard suites need. */
export const dashboardAreas = (options: DashboardOptions) => (context: AppContext): Area[] => [
  createAuthArea(context),
  createStatusArea(context),
  createDashboardArea(context, { feeds: newLiveFeeds() }, options),
];

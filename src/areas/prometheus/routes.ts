import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { MediaBody } from '../../http/documented-responses.js';
import { PrometheusExposition, type ExpositionSources } from './exposition.js';

/** The exposition format's media type (Prometheus text format 0.0.4). */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * GET /api/v1/metrics/prometheus: the appliance's figures for a Prometheus server to scrape, with a bearer token
 * or an API key that holds dashboard:view (docs/dashboard.md).
 */
export function createPrometheusArea(context: AppContext, sources: ExpositionSources): Area {
  const exposition = new PrometheusExposition(context, sources);
  return {
    name: 'prometheus',
    routes: [
      {
        method: 'GET', path: '/api/v1/metrics/prometheus', access: 'dashboard:view', tags: ['status'],
        summary: 'Prometheus text exposition: packet filter, per-rule hits, states, interfaces, gateways, DNS, DHCP, VPN, IDS and API figures',
        schema: { response: { 200: MediaBody('text/plain', 'Prometheus text exposition format 0.0.4') } },
        handler: async (_request, reply) => reply.type(PROMETHEUS_CONTENT_TYPE).send(await exposition.render()),
      },
    ],
  };
}

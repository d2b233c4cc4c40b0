import { Type } from 'typebox';
import type { Area } from '../area.js';
import { route, type RouteSpec } from '../../http/route.js';
import type { AppContext } from '../../context.js';
import { IdParams } from '../../model/schema-helpers.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { GeoIpService } from './service.js';
import { GeoLookupResult, GeoRuleCreate, GeoRuleRecord, GeoRuleUpdate } from './schema.js';

const tags = ['geoip'];

export function createGeoipArea(context: AppContext): Area & { service: GeoIpService } {
  const geo = new GeoIpService(context);
  return { name: 'geoip', routes: routes(geo), service: geo };
}

function routes(geo: GeoIpService): RouteSpec[] {
  return [
    {
      method: 'GET', path: '/api/v1/geoip', access: 'geoip:read', tags, summary: 'Geo-IP rules, ordered by country',
      schema: { response: { 200: Type.Array(GeoRuleRecord) } },
      handler: (_request, reply) => {
        const rules = geo.list();
        reply.header('x-total-count', String(rules.length));
        return rules;
      },
    },
    route({
      method: 'POST', path: '/api/v1/geoip', access: 'geoip:write', tags, summary: 'Add a country allow/block rule',
      schema: { body: GeoRuleCreate, response: { 201: GeoRuleRecord } },
      handler: (request, reply) => reply.status(201).send(geo.rules.toRecord(geo.create(request.body))),
    }),
    route({
      method: 'PUT', path: '/api/v1/geoip/{id}', access: 'geoip:write', tags, summary: 'Change a rule (fields not sent are kept)',
      schema: { params: IdParams(), body: GeoRuleUpdate, response: { 200: GeoRuleRecord } },
      handler: (request) => geo.rules.toRecord(geo.update(request.params.id, request.body)),
    }),
    ...collectionRoutes(geo.rules, { path: '/api/v1/geoip', access: { read: 'geoip:read', write: 'geoip:write' }, tags, operations: ['delete'] }),
    {
      method: 'POST', path: '/api/v1/geoip/refresh', access: 'geoip:write', tags,
      summary: 'Re-read the country data and rebuild the geo-IP sets (the ruleset in force is reloaded with them)',
      schema: { response: { 200: Type.Object({ countries: Type.Integer(), sets: Type.Array(Type.Object({ name: Type.String(), elements: Type.Integer() })) }) } },
      handler: () => geo.refresh(),
    },
    route({
      method: 'GET', path: '/api/v1/geoip/lookup/{ip}', access: 'geoip:read', tags, summary: 'Country (and network) of an address from the shipped dataset',
      schema: { params: Type.Object({ ip: Type.String({ maxLength: 64 }) }), response: { 200: GeoLookupResult } },
      handler: (request) => geo.lookup(request.params.ip),
    }),
  ];
}

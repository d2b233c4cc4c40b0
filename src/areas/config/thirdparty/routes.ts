import { Type } from 'typebox';
import type { AppContext } from '../../../context.js';
import { route, type RouteSpec } from '../../../http/route.js';
import type { ConfigService } from '../service.js';
import { actorOfRequest } from '../request.js';
import * as A from '../answers.js';
import { ThirdPartyImporter } from './importer.js';

/** The XML travels JSON-escaped: room for a 10 MiB file and its escaping; the parser enforces the 10 MiB. */
const BODY_LIMIT = 32 * 1024 * 1024;

const Body = Type.Object({
  xml: Type.String({ minLength: 1, description: 'an OPNsense or pfSense config.xml, as a string' }),
  interface_map: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.String({ minLength: 1, maxLength: 64 }), { description: 'source interface name (lan, wan, opt1) → local interface name' })),
}, { additionalProperties: false });

const tags = ['config'];

export function thirdPartyRoutes(context: AppContext, service: ConfigService): RouteSpec[] {
  const importer = new ThirdPartyImporter(context, service);
  return [
    route({
      method: 'POST', path: '/api/v1/config/preview-thirdparty', access: 'backup:read', tags, bodyLimit: BODY_LIMIT,
      summary: 'Maps a foreign config.xml (OPNsense, pfSense) and lists every mapped object and every skipped element with the reason; writes nothing',
      schema: { body: Body, response: { 200: A.ThirdPartyPreview } },
      handler: (request) => importer.preview(request.body, actorOfRequest(request)),
    }),
    route({
      method: 'POST', path: '/api/v1/config/import-thirdparty', access: 'backup:write', tags, bodyLimit: BODY_LIMIT,
      summary: 'Imports a foreign config.xml as one atomic change, pending until applied',
      schema: { body: Body, response: { 200: A.ThirdPartyImport } },
      handler: (request) => importer.import(request.body, actorOfRequest(request)),
    }),
  ];
}

import { Type } from 'typebox';
import type { Area } from '../area.js';
import { route, type RouteSpec } from '../../http/route.js';
import type { AppContext } from '../../context.js';
import { IdParams } from '../../model/schema-helpers.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { ErrorAnswer, MediaBody } from '../../http/documented-responses.js';
import { CaService } from './service.js';
import { CaCertDetail, CaCertSummary, CaCreate, CaInfo, CaIssue, CaIssued } from './schema.js';

const tags = ['ca'];
const PEM = 'application/x-pem-file';
const Message = Type.Object({ message: Type.String() });
const NotInitialised = ErrorAnswer('The local CA has not been generated yet');

export function createCaArea(context: AppContext): Area & { service: CaService } {
  const service = new CaService(context);
  return { name: 'ca', routes: routes(service), service };
}

function routes(ca: CaService): RouteSpec[] {
  return [
    {
      method: 'GET', conditional: 'read', path: '/api/v1/ca', access: 'settings:read', tags, summary: 'The local CA (initialized false until generated)',
      schema: { response: { 200: CaInfo } },
      handler: () => ca.info(),
    },
    route({
      method: 'POST', path: '/api/v1/ca', access: 'settings:write', tags,
      summary: 'Generate the local root CA (ECDSA P-256), replacing any existing root',
      schema: { body: CaCreate, response: { 201: CaInfo } },
      handler: async (request, reply) => reply.status(201).send(await ca.generate(request.body)),
    }),
    {
      method: 'GET', path: '/api/v1/ca/cert.pem', access: 'settings:read', tags, summary: 'The CA certificate (PEM)',
      schema: { response: { 200: MediaBody(PEM, 'The CA certificate, PEM'), 404: NotInitialised } },
      handler: (_request, reply) => reply.type(PEM).header('content-disposition', 'attachment; filename="ca.pem"').send(ca.caPem()),
    },
    {
      method: 'GET', path: '/api/v1/ca/crl', access: 'settings:read', tags, summary: 'Signed X.509 CRL of revoked certificates (PEM, BEGIN X509 CRL)',
      schema: { response: { 200: MediaBody(PEM, 'The CRL, PEM-encoded (BEGIN X509 CRL)'), 404: NotInitialised } },
      handler: async (_request, reply) => reply.type(PEM).header('content-disposition', 'attachment; filename="ca.crl"').send(await ca.crl()),
    },
    {
      method: 'GET', path: '/api/v1/ca/certs', access: 'settings:read', tags, summary: 'Certificates issued by the local CA, newest first',
      schema: { response: { 200: Type.Array(CaCertSummary) } },
      handler: () => ca.list(),
    },
    route({
      method: 'POST', path: '/api/v1/ca/certs', access: 'settings:write', tags,
      summary: 'Issue a server or client certificate; the answer carries the private key this once (later only via key.pem)',
      schema: { body: CaIssue, response: { 201: CaIssued } },
      handler: async (request, reply) => reply.status(201).header('cache-control', 'no-store').send(await ca.issue(request.body)),
    }),
    route({
      method: 'GET', path: '/api/v1/ca/certs/{id}', access: 'settings:read', tags, summary: 'One issued certificate with its PEM (no key)',
      schema: { params: IdParams(), response: { 200: CaCertDetail } },
      handler: (request) => ca.detail(request.params.id),
    }),
    ...collectionRoutes(ca.certs, { path: '/api/v1/ca/certs', access: { read: 'settings:read', write: 'settings:write' }, tags, operations: ['delete'] }),
    route({
      method: 'GET', path: '/api/v1/ca/certs/{id}/cert.pem', access: 'settings:read', tags, summary: 'Certificate PEM',
      schema: { params: IdParams(), response: { 200: MediaBody(PEM, 'The certificate, PEM') } },
      handler: (request, reply) => reply.type(PEM).send(ca.detail(request.params.id).certificate_pem),
    }),
    route({
      method: 'GET', path: '/api/v1/ca/certs/{id}/key.pem', access: 'settings:write', tags, summary: 'Private key PEM of an issued certificate',
      schema: { params: IdParams(), response: { 200: MediaBody(PEM, 'The private key, PEM') } },
      handler: (request, reply) => reply.type(PEM).header('cache-control', 'no-store').send(ca.keyPem(request.params.id)),
    }),
    route({
      method: 'POST', path: '/api/v1/ca/certs/{id}/revoke', access: 'settings:write', tags, summary: 'Revoke a certificate (listed in the CRL from now on)',
      schema: { params: IdParams(), response: { 200: Message } },
      handler: (request) => {
        ca.revoke(request.params.id);
        return { message: `Certificate ${request.params.id} revoked` };
      },
    }),
  ];
}

import { Type } from 'typebox';
import type { Area } from '../area.js';
import { route, type RouteSpec } from '../../http/route.js';
import type { AppContext } from '../../context.js';
import { ErrorAnswer, MediaBody } from '../../http/documented-responses.js';
import type { FastifyReply } from 'fastify';
import { IdParams } from '../../model/schema-helpers.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { AcmeService } from './service.js';
import { Account, AccountBody, ActionResult, CertCreate, CertSummary, CertUpdate, TargetBody, TargetRecord } from './schema.js';
import type { CertificateConsumer, LocalTlsStore } from './certificate-consumers.js';
import { announceExpiring, type CertificateValidity } from '../common/certificate-expiry.js';

const tags = ['acme'];
const read = 'settings:read' as const;
const write = 'settings:write' as const;
const pem = (reply: FastifyReply, filename: string, body: string) =>
  reply.type('application/x-pem-file').header('content-disposition', `attachment; filename="${filename.replace(/[^A-Za-z0-9._*-]/g, '_')}"`).header('cache-control', 'no-store').send(body);

/** How often certificates are checked for renewal (each renews within its renew_days_before_expiry). */
const RENEWAL_CHECK_MS = 60 * 60 * 1000;

export function createAcmeArea(
  context: AppContext,
  needs: {
    certificateConsumers?: CertificateConsumer[]; challengesThroughProxy?: () => Promise<string | null>; localTlsStore?: LocalTlsStore;
    /** The appliance's other certificates (the local CA's, files the reverse proxy serves), announced with ACME's when they near expiry. */
    otherCertificates?: () => CertificateValidity[];
  } = {},
): Area & { service: AcmeService; announceExpiring(days?: number): number } {
  const acme = new AcmeService(context, needs.certificateConsumers, needs.challengesThroughProxy, needs.localTlsStore);
  let timer: NodeJS.Timeout | null = null;
  const check = () => {
    acme.renewDue().then((renewed) => {
      if (renewed) context.log.info({ renewed }, 'ACME certificates renewed');
    }, (error: Error) => context.log.warn({ err: error }, 'scheduled ACME renewal failed'));
  };
  // Every certificate the appliance holds, whatever made it: one check, one event kind (certificate.expiring).
  const expiring = (days?: number) => announceExpiring(context, [...acme.validities(), ...(needs.otherCertificates?.() ?? [])], days);
  return {
    name: 'acme',
    service: acme,
    announceExpiring: expiring,
    routes: routes(context, acme),
    // Only where certificates can be served: the simulated platform places no orders on its own.
    start() {
      // Expiry is announced on every platform (certificates may be imported); renewals run where they can be served.
      const hourly = () => {
        expiring();
        if (!context.platform.simulated) check();
      };
      expiring();
      timer = setInterval(hourly, RENEWAL_CHECK_MS);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}

function routes(context: AppContext, acme: AcmeService): RouteSpec[] {
  const access = { read, write };
  return [
    {
      method: 'GET', conditional: 'read', path: '/api/v1/acme/account', access: read, tags, summary: 'The ACME account (directory and contact)',
      schema: { response: { 200: Account } },
      handler: () => acme.accountView(),
    },
    route({
      method: 'POST', path: '/api/v1/acme/account', access: write, tags, summary: 'Save the ACME account (directory, contact, HTTP-01 responder address, private CA networks); it registers with the CA at the first issue',
      schema: { body: AccountBody, response: { 200: Account } },
      handler: (request) => acme.saveAccount(request.body),
    }),
    ...collectionRoutes(acme.certs, { path: '/api/v1/acme/certs', access, tags, operations: ['list', 'read'] }),
    route({
      method: 'POST', path: '/api/v1/acme/certs', access: write, tags, summary: 'Add a certificate to obtain (status pending; nothing is issued yet)',
      schema: { body: CertCreate, response: { 201: CertSummary } },
      handler: (request, reply) => reply.status(201).send(acme.certs.toRecord(acme.createCert(request.body))),
    }),
    route({
      method: 'PUT', path: '/api/v1/acme/certs/{id}', access: write, tags, summary: 'Change names, challenge, provider or renewal settings',
      schema: { params: IdParams(), body: CertUpdate, response: { 200: CertSummary } },
      handler: (request) => acme.certs.toRecord(acme.updateCert(request.params.id, request.body)),
    }),
    route({
      method: 'DELETE', path: '/api/v1/acme/certs/{id}', access: write, tags, summary: 'Delete a certificate and its export targets',
      schema: { params: IdParams() },
      handler: (request, reply) => {
        acme.deleteCert(request.params.id);
        return reply.status(204).send();
      },
    }),
    route({
      method: 'GET', path: '/api/v1/acme/certs/{id}/cert.pem', access: read, tags, summary: 'Certificate and chain (PEM)',
      schema: { params: IdParams(), response: { 200: MediaBody('application/x-pem-file', 'The certificate and its chain, PEM') } },
      handler: (request, reply) => {
        const { name, body } = acme.certPem(request.params.id);
        return pem(reply, `${name}.pem`, body);
      },
    }),
    route({
      method: 'GET', path: '/api/v1/acme/certs/{id}/key.pem', access: write, tags, summary: 'Private key (PEM; empty before issuance)',
      schema: { params: IdParams(), response: { 200: MediaBody('application/x-pem-file', 'The private key, PEM (empty before issuance)') } },
      handler: (request, reply) => {
        const { name, body } = acme.keyPem(request.params.id);
        return pem(reply, `${name}.key`, body);
      },
    }),
    route({
      method: 'POST', path: '/api/v1/acme/certs/{id}/renew', access: write, tags, summary: 'Issue or renew now (not on the backup of a high-availability pair: the primary renews and pushes the certificate)',
      schema: { params: IdParams(), response: { 200: ActionResult, 409: ErrorAnswer('this node is the backup of a pair') } },
      handler: async (request) => {
        await acme.assertMayRenew();
        return acme.renew(request.params.id);
      },
    }),
    route({
      method: 'POST', path: '/api/v1/acme/certs/{id}/publish', access: write, tags, summary: 'Push the certificate to every export target',
      schema: { params: IdParams(), response: { 200: ActionResult } },
      handler: (request) => acme.publish(request.params.id),
    }),
    ...collectionRoutes(acme.targets, { path: '/api/v1/acme/certs/{cert_id}/targets', parentParams: { list: 'cert_id' }, access, tags, operations: ['list'] }),
    route({
      method: 'POST', path: '/api/v1/acme/certs/{cert_id}/targets', access: write, tags, summary: 'Add an export target (file paths are confined to certificate directories)',
      schema: { params: Type.Object({ cert_id: Type.String({ format: 'uuid' }) }), body: TargetBody, response: { 201: TargetRecord } },
      handler: (request, reply) => reply.status(201).send(acme.targets.toRecord(acme.createTarget(request.params.cert_id, request.body))),
    }),
    route({
      method: 'PUT', path: '/api/v1/acme/export-targets/{id}', access: write, tags, summary: 'Change an export target',
      schema: { params: IdParams(), body: Type.Object({ kind: TargetBody.properties.kind, config: TargetBody.properties.config }, { required: [], additionalProperties: false }), response: { 200: TargetRecord } },
      handler: (request) => acme.targets.toRecord(acme.updateTarget(request.params.id, request.body)),
    }),
    route({
      method: 'DELETE', path: '/api/v1/acme/export-targets/{id}', access: write, tags, summary: 'Delete an export target',
      schema: { params: IdParams() },
      handler: (request, reply) => {
        acme.targets.remove(request.params.id);
        return reply.status(204).send();
      },
    }),
    ...collectionRoutes(acme.providers, { path: '/api/v1/acme/dns-providers', access, tags, operations: ['list', 'create', 'update', 'delete'] }),
    route({
      method: 'POST', path: '/api/v1/acme/dns-providers/{id}/test', access: write, tags, summary: 'Add and remove a test TXT record through the provider',
      schema: { params: IdParams(), response: { 200: Type.Object({ ok: Type.Boolean(), message: Type.String() }) } },
      handler: (request) => acme.testProvider(request.params.id),
    }),
  ];
}

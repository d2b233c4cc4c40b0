import type { RouteAccess } from '../core/permissions.js';
import type { SingletonModel } from '../model/singleton-model.js';
import type { ConfigData } from '../store/config-store.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteSpec } from './route.js';
import { requireIfMatch, requirePreconditions, setEntityTag, strongTagOfValue } from './conditional.js';

/** A section's entity tag: a hash of its values, sealed secrets included (a new secret changes the tag). */
const sectionTag = (data: ConfigData): string => strongTagOfValue(data);

/** The section's current values as answered (secrets left out), its entity tag set on the reply. */
function taggedView(model: SingletonModel, reply: FastifyReply): ConfigData {
  const data = model.read();
  setEntityTag(reply, sectionTag(data));
  return model.visible(data);
}

/** Where and to whom a settings section is served. */
export interface SingletonRouteParts {
  path: string;
  /** `write` must be the model's writeAccess: import and restore hold callers to the same permission. */
  access: { read: RouteAccess; write: RouteAccess };
  tags: string[];
  /** How a PUT writes the patch, when a service must act on it (checks, audit); default: the model's own write. */
  write?: (patch: ConfigData, request: FastifyRequest) => void;
}

/** GET (with defaults, secrets left out) and PUT (a patch: fields not sent are kept) of a settings section. */
export function singletonRoutes(model: SingletonModel, parts: SingletonRouteParts): [get: RouteSpec, put: RouteSpec] {
  if (parts.access.write !== model.declaration.writeAccess) {
    throw new Error(`${model.kind}: routes write with ${parts.access.write}, the model with ${model.declaration.writeAccess}`);
  }
  const { noun, schemas } = model;
  const write = parts.write ?? ((patch: ConfigData) => model.write(patch));
  return [
    {
      method: 'GET', path: parts.path, access: parts.access.read, tags: parts.tags, summary: `Read ${noun}`, conditional: 'read',
      schema: { response: { 200: schemas.view } },
      handler: (_request, reply) => {
        return taggedView(model, reply);
      },
    },
    {
      method: 'PUT', path: parts.path, access: parts.access.write, tags: parts.tags, summary: `Change ${noun} (fields not sent are kept)`, conditional: 'write',
      schema: { body: schemas.patch, response: { 200: schemas.view } },
      handler: (request, reply) => {
        requirePreconditions(request, sectionTag(model.read()));
        write(request.body as ConfigData, request);
        return taggedView(model, reply);
      },
      // A section whose write needs the request (a check of the caller, an audit entry) is changed by its PUT only.
      ...(parts.write ? {} : {
        change: {
          op: 'update' as const, body: schemas.patch,
          apply: (_params: Record<string, string>, body: ConfigData | undefined, ifMatch: string | undefined, field: string) => {
            const before = model.read();
            requireIfMatch(ifMatch, sectionTag(before), field);
            model.write(body!);
            return { kind: model.kind, before: model.visible(before), after: model.visible(model.read()) };
          },
        },
      }),
    },
  ];
}

/**
 * Atomic change sets: an ordered list of create/update/delete operations on any collection or settings section,
 * each made through the same model write its own route makes (http/change-target.ts), all in one store
 * transaction: every operation holds or nothing is written. Objects created earlier in the set are named by a
 * client-chosen key (`$key` as a path segment, `{"$ref": "key"}` in a body). A dry run makes every write, keeps
 * the result, and rolls the transaction back.
 */
import type { ValidateFunction } from 'ajv';
import { Type, type Static } from 'typebox';
import type { AppContext } from '../../context.js';
import { badRequest, forbidden, HttpError } from '../../core/errors.js';
import type { Permission } from '../../core/permissions.js';
import type { ChangeResult, ChangeTarget } from '../../http/change-target.js';
import type { RouteSpec } from '../../http/route.js';
import { compileBodyValidator, describeValidationErrors } from '../../model/validation.js';
import type { ConfigData } from '../../store/config-store.js';
import type { GateRequest } from '../../core/apply.js';

export const MAX_OPERATIONS = 1000;
const KEY = '^[A-Za-z0-9_-]{1,64}$';

export const Operation = Type.Object({
  op: Type.Union([Type.Literal('create'), Type.Literal('update'), Type.Literal('delete')]),
  path: Type.String({ minLength: 1, maxLength: 512, description: 'the API path the same write would use, e.g. /api/v1/rules or /api/v1/aliases/$web' }),
  key: Type.Optional(Type.String({ pattern: KEY, description: 'create only: names the new object for later operations ($key, {"$ref": "key"})' })),
  body: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  if_match: Type.Optional(Type.String({ description: 'update/delete: the entity tag the object must still have (as If-Match)' })),
}, { additionalProperties: false });
export type ChangeOperation = Static<typeof Operation>;

export const ChangeSetBody = Type.Object({
  operations: Type.Array(Operation, { minItems: 1, maxItems: MAX_OPERATIONS }),
}, { additionalProperties: false });

export const ChangeSetQuery = Type.Object({
  dry_run: Type.Boolean({ default: false, description: 'validate every operation and answer the resulting diff without writing' }),
  force: Type.Boolean({ default: false, description: 'keep the change even when enabled transit assertions would break once applied (audited)' }),
}, { additionalProperties: false });

export const ChangeSetAnswer = Type.Object({
  dry_run: Type.Boolean(),
  applied: Type.Boolean({ description: 'whether the configuration was changed (false on a dry run)' }),
  created: Type.Record(Type.String(), Type.String(), { description: 'key → id of the objects created (provisional on a dry run)' }),
  changes: Type.Array(Type.Object({
    index: Type.Integer(),
    op: Type.String(),
    path: Type.String({ description: 'the path with keys replaced by ids' }),
    kind: Type.String(),
    id: Type.Union([Type.String(), Type.Null()]),
    before: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    after: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  })),
});

interface Target {
  pattern: RegExp;
  params: string[];
  access: RouteSpec['access'];
  change: ChangeTarget;
  validate?: ValidateFunction;
}

const METHOD_OF = { create: 'POST', update: 'PUT', delete: 'DELETE' } as const;
/** Stands for a `$key` segment while finding an operation's route: any id matches the same route. */
const PLACEHOLDER_ID = '00000000-0000-4000-8000-000000000000';

/** Thrown inside the transaction to roll a dry run back with its result. */
class DryRunRollback extends Error {
  constructor(readonly result: Static<typeof ChangeSetAnswer>) {
    super('dry run');
  }
}

/** Every write route that may take part, by method and path pattern. */
export class ChangeTargets {
  private readonly targets = new Map<string, Target[]>();

  constructor(routes: readonly RouteSpec[]) {
    for (const route of routes) {
      if (!route.change) continue;
      const params: string[] = [];
      const source = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{([^}]+)\}/g, (_m, name: string) => {
        params.push(name);
        return '([^/]+)';
      });
      const list = this.targets.get(route.method) ?? [];
      list.push({ pattern: new RegExp(`^${source}$`), params, access: route.access, change: route.change, validate: route.change.body ? compileBodyValidator(route.change.body) : undefined });
      this.targets.set(route.method, list);
    }
    // A literal segment (`/rules/block-logging`) beats a parameter (`/rules/{id}`).
    for (const list of this.targets.values()) list.sort((a, b) => a.params.length - b.params.length);
  }

  find(op: ChangeOperation['op'], path: string): { target: Target; params: Record<string, string> } | undefined {
    for (const target of this.targets.get(METHOD_OF[op]) ?? []) {
      const match = target.pattern.exec(path);
      if (!match) continue;
      return { target, params: Object.fromEntries(target.params.map((name, i) => [name, decodeURIComponent(match[i + 1])])) };
    }
    return undefined;
  }
}

/** Replaces `{"$ref": "key"}` anywhere in a body by the id created under that key. */
function resolveRefs(value: unknown, created: ReadonlyMap<string, string>, field: string): unknown {
  if (Array.isArray(value)) return value.map((item, i) => resolveRefs(item, created, `${field}.${i}`));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  if (entries.length === 1 && entries[0][0] === '$ref') {
    const key = entries[0][1];
    const id = typeof key === 'string' ? created.get(key) : undefined;
    if (id === undefined) throw badRequest(`${field}: $ref ${JSON.stringify(key)} names no object created earlier in this change set`);
    return id;
  }
  return Object.fromEntries(entries.map(([name, item]) => [name, resolveRefs(item, created, `${field}.${name}`)]));
}

/** Replaces `$key` path segments by the ids created under those keys. */
function resolvePath(path: string, created: ReadonlyMap<string, string>, field: string): string {
  return path.split('/').map((segment) => {
    if (!segment.startsWith('$')) return segment;
    const id = created.get(segment.slice(1));
    if (id === undefined) throw badRequest(`${field}: ${segment} names no object created earlier in this change set`);
    return id;
  }).join('/');
}

/** Prefixes an operation's refusal with where it happened, keeping its status. */
function inOperation(error: unknown, index: number, operation: ChangeOperation): never {
  if (error instanceof HttpError) {
    const where = `operations.${index} (${operation.op} ${operation.path})`;
    const message = error.message.startsWith(`operations.${index}`) ? error.message : `${where}: ${error.message}`;
    throw new HttpError(error.statusCode, `${message}; nothing was changed`, error.headers);
  }
  throw error;
}

/** The asynchronous preparations of the routes the operations write through (each once), before the transaction. */
export async function prepareChangeSet(targets: ChangeTargets, permissions: ReadonlySet<Permission>, operations: readonly ChangeOperation[]): Promise<void> {
  const prepares = new Set<() => Promise<unknown>>();
  for (const operation of operations) {
    const target = targets.find(operation.op, operation.path.replace(/\/\$[^/]*/g, `/${PLACEHOLDER_ID}`))?.target;
    // Only for operations the caller may make (the others are refused before anything is written).
    if (target?.change.prepare && (target.access === 'authenticated' || permissions.has(target.access as Permission))) prepares.add(target.change.prepare);
  }
  for (const prepare of prepares) await prepare();
}

/**
 * Checks every operation's permission first (403 before anything is written), then applies them in order in
 * one transaction; any refusal rolls all of them back and answers with the operation that failed.
 */
export function applyChangeSet(context: AppContext, targets: ChangeTargets, permissions: ReadonlySet<Permission>, operations: readonly ChangeOperation[], dryRun: boolean, gate?: GateRequest) {
  const keys = new Set<string>();
  operations.forEach((operation, index) => {
    const field = `body.operations.${index}`;
    if (operation.key !== undefined) {
      if (operation.op !== 'create') throw badRequest(`${field}.key: only a create names a new object`);
      if (keys.has(operation.key)) throw badRequest(`${field}.key: "${operation.key}" is used twice`);
      keys.add(operation.key);
    }
    if (operation.op === 'create' && operation.if_match !== undefined) throw badRequest(`${field}.if_match: a create has no entity tag to match`);
    if (operation.op === 'delete' && operation.body !== undefined) throw badRequest(`${field}.body: a delete takes no body`);
    if (operation.op !== 'delete' && operation.body === undefined) throw badRequest(`${field}.body is required for ${operation.op}`);
    // `$key` segments stand for an id: any id matches the same route, so a placeholder finds the target.
    const found = targets.find(operation.op, operation.path.replace(/\/\$[^/]*/g, `/${PLACEHOLDER_ID}`));
    if (!found) throw badRequest(`${field}.path: no ${operation.op} of ${operation.path} can be part of a change set (collections and settings sections only)`);
    const access = found.target.access;
    if (access !== 'public' && access !== 'authenticated' && !permissions.has(access)) throw forbidden(`${field}: permission ${access} required; nothing was changed`);
  });

  const created = new Map<string, string>();
  const changes: Static<typeof ChangeSetAnswer>['changes'] = [];
  const run = () => {
    operations.forEach((operation, index) => {
      const field = `operations.${index}`;
      try {
        const path = resolvePath(operation.path, created, `${field}.path`);
        const { target, params } = targets.find(operation.op, path)!;
        let body: ConfigData | undefined;
        if (operation.body !== undefined) {
          body = resolveRefs(operation.body, created, `${field}.body`) as ConfigData;
          if (target.validate && !target.validate(body)) throw badRequest(describeValidationErrors(target.validate.errors ?? [], `${field}.body`));
        }
        const result: ChangeResult = target.change.apply(params, body, operation.if_match, `${field}.if_match`);
        if (operation.key !== undefined && result.id !== undefined) created.set(operation.key, result.id);
        changes.push({
          index, op: operation.op, path, kind: result.kind, id: result.id ?? null,
          before: result.before as Record<string, unknown> | null, after: result.after as Record<string, unknown> | null,
        });
      } catch (error) {
        inOperation(error, index, operation);
      }
    });
    const answer = { dry_run: dryRun, applied: !dryRun, created: Object.fromEntries(created), changes };
    if (dryRun) throw new DryRunRollback(answer);
    // The configuration the set leaves, judged against the transit assertions inside the transaction: a refusal
    // (409) rolls every operation back (after prepareGates, in the handler).
    if (gate) context.apply.gateSync('stored', gate);
    return answer;
  };
  try {
    return context.store.transaction(run);
  } catch (error) {
    if (error instanceof DryRunRollback) return error.result;
    throw error;
  }
}

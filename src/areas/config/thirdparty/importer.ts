import type { AppContext } from '../../../context.js';
import { badRequest } from '../../../core/errors.js';
import { newId } from '../../../core/ids.js';
import type { ConfigData, ConfigObject } from '../../../store/config-store.js';
import type { Actor, ConfigService } from '../service.js';
import { REDACTED } from '../secrets.js';
import { mapForeignConfig } from './map.js';
import { MAPPED_KINDS, MAPPED_SECRETS, type MappedKind, type MappedObject, type MappingPlan, type SkippedElement } from './model.js';
import { ForeignConfigError, parseForeignConfig } from './xml.js';
import { ADAPTERS, PLACEHOLDER_KINDS, type Adapter, type AdapterContext } from './adapters.js';
import type { CollectionModel } from '../../../model/collection-model.js';
import { HttpError } from '../../../core/errors.js';
import { assertValid, compileBodyValidator } from '../../../model/validation.js';
import type { ValidateFunction } from 'ajv';
import type { Permission } from '../../../core/permissions.js';
import { assertNoRefusedSections, holds, refusedKinds } from '../section-access.js';

/** The store kind of an intermediate object no Bulwark collection owns (users: see PLACEHOLDER_KINDS). */
export const storedKind = (kind: MappedKind): string => `thirdparty.${kind}`;

/** Thrown to roll a trial write back (the preview writes everything, then undoes it). */
class TrialRollback extends Error {}

interface WriteOutcome {
  written: { object: MappedObject; stored: ConfigObject; stored_as: string; notes: string[] }[];
  failed: SkippedElement[];
}

/** What makes two objects of a kind the same thing (an import never creates a second one). */
const IDENTITY: Partial<Record<MappedKind, { mapped: (data: ConfigData) => string; stored: (data: ConfigData) => string }>> = {
  interface: { mapped: (d) => String(d.name), stored: (d) => String(d.name) },
  vlan: { mapped: (d) => String(d.tag), stored: (d) => String(d.vlan_id) },
  gateway: { mapped: (d) => String(d.name), stored: (d) => String(d.name) },
  alias: { mapped: (d) => String(d.name), stored: (d) => String(d.name) },
  wg_tunnel: { mapped: (d) => String(d.name), stored: (d) => String(d.name) },
  imported_user: { mapped: (d) => String(d.username), stored: (d) => String(d.username) },
};

export interface ImportRequest {
  xml: string;
  interface_map?: Record<string, string>;
}

/**
 * Third-party import: maps an OPNsense or pfSense config.xml into the intermediate model and writes it as one
 * atomic change to the configuration store, where it is pending until applied. Secrets (WireGuard keys) are
 * sealed like every other secret; password hashes are never read.
 */
export class ThirdPartyImporter {
  constructor(
    private readonly context: AppContext,
    private readonly service: ConfigService,
  ) {
    // The intermediate kinds' secret fields are known to the store, so exports and previews redact them.
    for (const kind of PLACEHOLDER_KINDS) {
      context.store.kinds.declare({ kind: storedKind(kind), shape: 'collection', writeOnly: MAPPED_SECRETS[kind] ?? [] });
    }
  }

  /** The plan, minus objects that already exist in the configuration (listed as skipped instead). */
  private plan(request: ImportRequest): MappingPlan {
    const { store } = this.context;
    const plan = mapForeignConfig(parseForeignConfig(request.xml), request.interface_map ?? {});
    const objects: MappedObject[] = [];
    const skipped: SkippedElement[] = [...plan.skipped];
    const existing = new Map<string, Set<string>>();
    const removedRefs = new Set<string>();
    for (const object of plan.objects) {
      const identity = IDENTITY[object.kind];
      const parentLink = ADAPTERS[object.kind]?.parentLink;
      if (parentLink && removedRefs.has(object.links?.[parentLink] ?? '')) {
        skipped.push({ source: object.source, element: `${object.kind} ${object.ref}`, reason: 'the object it belongs to already exists and was not imported' });
        continue;
      }
      if (identity) {
        let keys = existing.get(object.kind);
        if (!keys) {
          const adapter = ADAPTERS[object.kind];
          const existingObjects = adapter ? store.list(adapter.kind) : store.list(storedKind(object.kind));
          keys = new Set(existingObjects.map((o) => identity.stored(o.data)));
          existing.set(object.kind, keys);
        }
        const key = identity.mapped(object.data);
        if (keys.has(key)) {
          removedRefs.add(object.ref);
          skipped.push({ source: object.source, element: `${object.kind} ${key}`, reason: `a ${object.kind} "${key}" already exists in the configuration` });
          continue;
        }
      }
      objects.push(object);
    }
    return { ...plan, objects, skipped };
  }

  private counts(objects: readonly MappedObject[]): Record<MappedKind, number> {
    const counts = Object.fromEntries(MAPPED_KINDS.map((kind) => [kind, 0])) as Record<MappedKind, number>;
    for (const object of objects) counts[object.kind]++;
    return counts;
  }

  /** The host's interface names, read before the (synchronous) write as the API's routes do. */
  private async adapterContext(): Promise<AdapterContext> {
    const host = await this.context.platform.network.interfaces().catch(() => null);
    return { app: this.context, hostInterfaces: host && host.length ? new Set(host.map((i) => i.name)) : null };
  }

  /** The configuration kind an intermediate object is written as, if this build stores it. */
  private storedKindOf(object: MappedObject): string | undefined {
    if (PLACEHOLDER_KINDS.includes(object.kind)) return storedKind(object.kind);
    return this.target(object.kind)?.adapter.kind;
  }

  async preview(request: ImportRequest, actor?: Actor) {
    const ctx = await this.adapterContext();
    let plan: MappingPlan;
    try {
      plan = this.plan(request);
    } catch (error) {
      if (!(error instanceof ForeignConfigError)) throw error;
      return {
        valid: false, kind: 'unknown', version: null, system: null, interfaces_found: [], interfaces_need_mapping: [],
        counts: this.counts([]), objects: [], skipped: [], error: error.message,
      };
    }
    const mapped = request.interface_map ?? {};
    // The preview performs the very writes the import would, through the same validators, and rolls them back:
    // what it lists is what the import writes, and what a collection refuses is listed as skipped.
    let outcome: WriteOutcome | undefined;
    try {
      this.context.store.transaction(() => {
        outcome = this.write(plan, ctx, actor?.permissions);
        throw new TrialRollback();
      });
    } catch (error) {
      if (!(error instanceof TrialRollback)) throw error;
    }
    const { written, failed } = outcome!;
    return {
      valid: true,
      kind: plan.kind,
      version: plan.version,
      system: plan.system,
      interfaces_found: plan.interfaces_found,
      interfaces_need_mapping: plan.interfaces_found.filter((name) => !(name in mapped)),
      counts: this.counts(written.map((w) => w.object)),
      objects: written.map(({ object, stored_as, notes }) => ({
        kind: object.kind,
        stored_as,
        source: object.source,
        data: redact(object),
        notes,
      })),
      skipped: [...plan.skipped, ...failed],
      error: null,
    };
  }

  /** The adapter and collection an intermediate kind is written through in this build, if any. */
  private target(kind: MappedKind): { adapter: Adapter; collection?: CollectionModel } | undefined {
    const adapter = ADAPTERS[kind];
    if (!adapter) return undefined;
    if (adapter.write) return { adapter };
    const collection = this.context.models.collections().find((c) => c.kind === adapter.kind);
    return collection ? { adapter, collection } : undefined;
  }

  private readonly validators = new Map<string, ValidateFunction>();

  /** The body schema objects of the collection are created with (the request normaliser's when it has one). */
  private createValidator(adapter: Adapter, collection: CollectionModel): ValidateFunction {
    let validator = this.validators.get(adapter.kind);
    if (!validator) {
      validator = compileBodyValidator(adapter.request?.schema ?? collection.schemas.create);
      this.validators.set(adapter.kind, validator);
    }
    return validator;
  }

  /** Validates and stores one body as the area's POST does: body schema (with defaults), normaliser, collection create. */
  private createLikeApi(target: { adapter: Adapter; collection?: CollectionModel }, body: ConfigData, ctx: AdapterContext, parentId?: string): ConfigObject {
    const { adapter, collection } = target;
    if (adapter.write) return adapter.write(body, ctx);
    assertValid(this.createValidator(adapter, collection!), body);
    const data = adapter.request ? adapter.request.toStored(body, ctx) : body;
    const stored = collection!.create(data, parentId);
    adapter.request?.after?.(ctx);
    return this.context.store.get(adapter.kind, stored.id) ?? stored;
  }

  /** Writes the plan inside the caller's transaction; an object a collection refuses (and what depends on it) is skipped. */
  private write(plan: MappingPlan, ctx: AdapterContext, permissions?: ReadonlySet<Permission>): WriteOutcome {
    const { store, sealer } = this.context;
    const ids = new Map<string, string>();
    const failedRefs = new Set<string>();
    const written: WriteOutcome['written'] = [];
    const failed: SkippedElement[] = [];
    const label = (object: MappedObject) => `${object.kind} ${String(object.data.name ?? object.data.description ?? object.data.hostname ?? object.data.network ?? object.ref)}`;
    for (const object of plan.objects) {
      const missing = Object.values(object.links ?? {}).find((ref) => failedRefs.has(ref));
      if (missing) {
        failedRefs.add(object.ref);
        failed.push({ source: object.source, element: label(object), reason: `depends on ${missing}, which was not imported` });
        continue;
      }
      const kind = this.storedKindOf(object);
      const needed = kind === undefined ? undefined : store.kinds.writeAccessOf(kind);
      if (needed !== undefined && !holds(needed, permissions)) {
        failedRefs.add(object.ref);
        failed.push({ source: object.source, element: label(object), reason: `${kind}: permission ${needed} required to write it` });
        continue;
      }
      if (PLACEHOLDER_KINDS.includes(object.kind)) {
        const data: ConfigData = { ...object.data };
        for (const field of MAPPED_SECRETS[object.kind] ?? []) {
          if (typeof data[field] === 'string' && data[field] !== '') data[field] = sealer.seal(data[field] as string);
        }
        data.import_source = { format: plan.kind, version: plan.version, element: object.source, notes: object.notes ?? [] };
        const id = newId();
        ids.set(object.ref, id);
        written.push({ object, stored: store.insert(storedKind(object.kind), data, id), stored_as: storedKind(object.kind), notes: object.notes ?? [] });
        continue;
      }
      const target = this.target(object.kind);
      if (!target) {
        failedRefs.add(object.ref);
        failed.push({ source: object.source, element: label(object), reason: `no area of this build stores ${object.kind} objects (${ADAPTERS[object.kind]?.kind ?? 'none'} is not declared)` });
        continue;
      }
      try {
        // a savepoint per object: a refusal half-way through a write leaves nothing of it behind
        const { stored, notes } = store.transaction(() => {
          const { body, notes } = target.adapter.body({ ...object.data }, ctx);
          const parentRef = target.adapter.parentLink ? object.links?.[target.adapter.parentLink] : undefined;
          return { stored: this.createLikeApi(target, body, ctx, parentRef ? ids.get(parentRef) : undefined), notes };
        });
        ids.set(object.ref, stored.id);
        written.push({ object, stored, stored_as: target.adapter.kind, notes: [...(object.notes ?? []), ...notes] });
      } catch (error) {
        failedRefs.add(object.ref);
        const reason = error instanceof HttpError ? error.message : `refused: ${(error as Error).message}`;
        failed.push({ source: object.source, element: label(object), reason: `${target.adapter.kind}: ${reason}` });
      }
    }
    return { written, failed };
  }

  /** One transaction: every mapped object lands, or none does. The previous state is kept as a version first. */
  async import(request: ImportRequest, actor: Actor) {
    const ctx = await this.adapterContext();
    let plan: MappingPlan;
    try {
      plan = this.plan(request);
    } catch (error) {
      if (error instanceof ForeignConfigError) throw badRequest(`body.xml: ${error.message}`);
      throw error;
    }
    const kinds = plan.objects.map((object) => this.storedKindOf(object)).filter((kind): kind is string => kind !== undefined);
    assertNoRefusedSections(refusedKinds(kinds, this.context.store.kinds, actor.permissions), `this ${plan.kind} import`);
    const before = this.service.versions.record({ actor: actor.name, comment: `before ${plan.kind} import`, source: 'save', applied: false });
    const { written, failed } = this.context.store.transaction(() => this.write(plan, ctx, actor.permissions));
    plan = { ...plan, objects: written.map((w) => w.object), skipped: [...plan.skipped, ...failed] };
    this.service.audit.record({
      action: 'config.import_thirdparty', outcome: 'success', actor: actor.name, clientIp: actor.clientIp,
      details: `${plan.kind} ${plan.version ?? ''}: ${written.length} objects, ${plan.skipped.length} skipped; before: version ${before.version}`,
    });
    const counts = this.counts(plan.objects);
    const summary = Object.entries(counts).filter(([, n]) => n > 0).map(([kind, n]) => `${n} ${kind}`).join(', ');
    return {
      message: written.length ? `Imported: ${summary} (pending: not applied until reload)` : 'Nothing imported, see skipped',
      kind: plan.kind,
      imported: counts,
      stored_as: Object.fromEntries(written.map((w) => [w.object.kind, w.stored_as])),
      objects: written.length,
      skipped: plan.skipped,
      pre_import_version: before.version,
      pending: this.service.activeSummary().pending,
    };
  }
}

function redact(object: MappedObject): ConfigData {
  const data = { ...object.data };
  for (const field of MAPPED_SECRETS[object.kind] ?? []) if (typeof data[field] === 'string' && data[field] !== '') data[field] = REDACTED;
  return data;
}

import type { AppContext } from '../../../context.js';
import { badRequest } from '../../../core/errors.js';
import { newId } from '../../../core/ids.js';
import type { ConfigData, ConfigObject } from '../../../store/config-store.js';
import type { Actor, ConfigService } from '../service.js';
import { REDACTED } from '../secrets.js';
import { mapForeignConfig } from './map.js';
import { MAPPED_KINDS, MAPPED_SECRETS, type MappedKind, type MappedObject, type MappingPlan, type SkippedElement } from './model.js';
import { ForeignConfigError, parseForeignConfig } from './xml.js';

/** The store kind an intermediate object is kept under until an area that owns the concept adopts it. */
export const storedKind = (kind: MappedKind): string => `thirdparty.${kind}`;

/** What makes two objects of a kind the same thing (an import never creates a second one). */
const IDENTITY: Partial<Record<MappedKind, (data: ConfigData) => string>> = {
  interface: (d) => String(d.name),
  vlan: (d) => `${String(d.parent)}.${String(d.tag)}`,
  gateway: (d) => String(d.name),
  alias: (d) => String(d.name),
  wg_tunnel: (d) => String(d.name),
  imported_user: (d) => String(d.username),
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
    for (const kind of MAPPED_KINDS) {
      context.store.kinds.declare({ kind: storedKind(kind), shape: 'collection', writeOnly: MAPPED_SECRETS[kind] ?? [] });
    }
  }

  /** The plan, minus objects that already exist in the configuration (listed as skipped instead). */
  private plan(request: ImportRequest): MappingPlan {
    const plan = mapForeignConfig(parseForeignConfig(request.xml), request.interface_map ?? {});
    const objects: MappedObject[] = [];
    const skipped: SkippedElement[] = [...plan.skipped];
    const existing = new Map<string, Set<string>>();
    const removedRefs = new Set<string>();
    for (const object of plan.objects) {
      const identity = IDENTITY[object.kind];
      if (Object.values(object.links ?? {}).some((ref) => removedRefs.has(ref))) {
        skipped.push({ source: object.source, element: `${object.kind} ${object.ref}`, reason: 'the object it belongs to already exists and was not imported' });
        continue;
      }
      if (identity) {
        let keys = existing.get(object.kind);
        if (!keys) {
          keys = new Set(this.context.store.list(storedKind(object.kind)).map((o) => identity(o.data)));
          existing.set(object.kind, keys);
        }
        const key = identity(object.data);
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

  preview(request: ImportRequest) {
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
    return {
      valid: true,
      kind: plan.kind,
      version: plan.version,
      system: plan.system,
      interfaces_found: plan.interfaces_found,
      interfaces_need_mapping: plan.interfaces_found.filter((name) => !(name in mapped)),
      counts: this.counts(plan.objects),
      objects: plan.objects.map((object) => ({
        kind: object.kind,
        stored_as: storedKind(object.kind),
        source: object.source,
        data: redact(object),
        notes: object.notes ?? [],
      })),
      skipped: plan.skipped,
      error: null,
    };
  }

  /** One transaction: every mapped object lands, or none does. The previous state is kept as a version first. */
  import(request: ImportRequest, actor: Actor) {
    let plan: MappingPlan;
    try {
      plan = this.plan(request);
    } catch (error) {
      if (error instanceof ForeignConfigError) throw badRequest(`body.xml: ${error.message}`);
      throw error;
    }
    const { store, sealer } = this.context;
    const ids = new Map(plan.objects.map((object) => [object.ref, newId()]));
    const before = this.service.versions.record({ actor: actor.name, comment: `before ${plan.kind} import`, source: 'save', applied: false });
    const written: ConfigObject[] = store.transaction(() =>
      plan.objects.map((object) => {
        const data: ConfigData = { ...object.data };
        for (const field of MAPPED_SECRETS[object.kind] ?? []) {
          if (typeof data[field] === 'string' && data[field] !== '') data[field] = sealer.seal(data[field] as string);
        }
        for (const [field, ref] of Object.entries(object.links ?? {})) data[field] = ids.get(ref) ?? null;
        data.import_source = { format: plan.kind, version: plan.version, element: object.source, notes: object.notes ?? [] };
        return store.insert(storedKind(object.kind), data, ids.get(object.ref));
      }),
    );
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

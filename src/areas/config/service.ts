import type { AppContext } from '../../context.js';
import { AuthAudit } from '../../auth/audit.js';
import { isoTime } from '../../core/clock.js';
import { Sealer } from '../../core/crypto.js';
import { badRequest, conflict, HttpError, notFound } from '../../core/errors.js';
import { replacementCut } from '../networking/management-cut.js';
import { ApplyFailed } from '../../core/apply.js';
import { BUILD } from '../../core/build-info.js';
import type { ConfigObject } from '../../store/config-store.js';
import type { Permission } from '../../core/permissions.js';
import { assertNoRefusedSections, holds, refusedSections } from './section-access.js';
import type { ConfigVersions, RetentionPolicy, VersionRecord, VersionSource } from '../../store/config-versions.js';
import { scratchStore } from '../../store/scratch-store.js';
import type { ConfigurationCheck } from '../../model/configuration-check.js';
import { diffConfigurations, type ConfigurationDiff } from './diff.js';
import {
  EXPORT_FORMAT, EXPORT_FORMAT_VERSION, integrityOf, newExportKeys, openExportKeys, readExportDocument, unwrapSecret, verifyIntegrity,
  wrapSecret, type ExportDocument, type ExportKeys,
} from './export-format.js';
import { mapSecrets, pathText, redactObject, REDACTED, valueAt, WRAPPED_PREFIX } from './secrets.js';

/** Topics this area announces on context.events. */
export const CONFIG_TOPICS = {
  applied: 'config.applied',
  saved: 'config.saved',
  commitConfirm: 'config.commit_confirm',
} as const;

export interface Actor {
  name: string;
  clientIp?: string | null;
  /**
   * What the caller holds: an import or restore may change only sections it could write directly.
   * Undefined for the appliance's own actions (the commit-confirm rollback), which restore whatever was running.
   */
  permissions?: ReadonlySet<Permission>;
  /**
   * The local address the request reached (the management address), and whether the caller confirmed cutting it
   * (`?confirm_management_cut=true`); undefined for the appliance's own actions (the commit-confirm rollback).
   */
  localAddress?: string;
  confirmManagementCut?: boolean;
}

/** One applier of a whole-configuration apply, as restore, import and the commit-confirm rollback report it. */
export interface ApplierRun {
  name: string;
  ok: boolean;
  ms: number;
}

/** What a replace-then-apply recorded, and which appliers ran. */
export interface ReplaceOutcome {
  record: VersionRecord;
  appliers: ApplierRun[];
}

export interface PreparedImport {
  document: ExportDocument;
  /** The objects ready for the store: secrets opened from the passphrase or filled from the live configuration, then sealed. */
  objects: ConfigObject[];
  secrets: { state: 'redacted' | 'passphrase'; count: number };
  unresolved: string[];
  errors: string[];
  warnings: string[];
}

/**
 * The configuration lifecycle over the versioned store: history, save, diff, check, restore, retention,
 * export and import. Applying goes through context.apply so every apply, wherever it starts, records a version.
 */
export class ConfigService {
  readonly versions: ConfigVersions;
  readonly audit: AuthAudit;
  /** The commit-confirm rollback target, never pruned (set by the commit-confirm service). */
  rollbackTarget: () => number | null = () => null;
  private readonly savedListeners = new Set<(record: VersionRecord) => void>();

  constructor(private readonly context: AppContext) {
    this.versions = context.apply.versions;
    this.audit = new AuthAudit(context.db, context.clock, 'config', context.events);
    context.apply.onApplied(({ version, actor, comment }) => {
      this.prune();
      context.events.emit(CONFIG_TOPICS.applied, { version: version.version, hash: version.hash, actor, comment, source: version.source });
    });
  }

  onSaved(listener: (record: VersionRecord) => void): () => void {
    this.savedListeners.add(listener);
    return () => this.savedListeners.delete(listener);
  }

  withActive(record: VersionRecord): VersionRecord & { active: boolean } {
    return { ...record, active: record.version === this.versions.activeVersion() };
  }

  requireVersion(version: number): VersionRecord {
    const record = this.versions.get(version);
    if (!record) throw notFound(`configuration version ${version} not found`);
    return record;
  }

  contentOf(version: number): ConfigObject[] {
    this.requireVersion(version);
    const content = this.versions.content(version);
    if (!content) throw notFound(`configuration version ${version} has no stored content`);
    return content;
  }

  /** The running configuration's version and whether the store holds changes not yet applied. */
  activeSummary() {
    const active = this.versions.activeVersion();
    const record = active === null ? undefined : this.versions.get(active);
    const currentHash = this.versions.currentHash();
    return {
      version: record?.version ?? null,
      hash: record?.hash ?? null,
      created_at: record?.created_at ?? null,
      created_by: record?.created_by ?? null,
      comment: record?.comment ?? null,
      source: record?.source ?? null,
      applied_at: record?.applied_at ?? null,
      resource_count: record?.resource_count ?? null,
      current_hash: currentHash,
      current_resource_count: this.context.store.snapshot().length,
      pending: record ? record.hash !== currentHash : true,
    };
  }

  redacted(objects: readonly ConfigObject[]): ConfigObject[] {
    return objects.map((object) => redactObject(object, this.context.store.kinds));
  }

  save(actor: Actor, comment: string | null): VersionRecord {
    const record = this.versions.record({ actor: actor.name, comment, source: 'save', applied: false });
    this.audit.record({ action: 'config.save', outcome: 'success', actor: actor.name, clientIp: actor.clientIp, details: `version ${record.version}` });
    this.prune();
    this.context.events.emit(CONFIG_TOPICS.saved, { version: record.version, hash: record.hash, actor: actor.name });
    for (const listener of this.savedListeners) listener(record);
    return record;
  }

  /** `current` (the store now), `active` (the running version) or a version number. */
  resolve(reference: string): { label: string; objects: ConfigObject[]; version: number | null } {
    if (reference === 'current') return { label: 'current', objects: this.context.store.snapshot(), version: null };
    if (reference === 'active') {
      const active = this.versions.activeVersion();
      if (active === null) return { label: 'active (none yet)', objects: [], version: null };
      return { label: `version ${active}`, objects: this.contentOf(active), version: active };
    }
    if (!/^\d{1,15}$/.test(reference)) throw badRequest(`querystring: "${reference}" is not a version number, "active" or "current"`);
    const version = Number(reference);
    return { label: `version ${version}`, objects: this.contentOf(version), version };
  }

  diff(fromReference: string, toReference: string): ConfigurationDiff & { from: string; to: string; from_version: number | null; to_version: number | null } {
    const from = this.resolve(fromReference);
    const to = this.resolve(toReference);
    return {
      from: from.label,
      to: to.label,
      from_version: from.version,
      to_version: to.version,
      ...diffConfigurations(from.objects, to.objects, { kinds: this.context.store.kinds, sealer: this.context.sealer, labels: [from.label, to.label] }),
    };
  }

  async check() {
    const result = this.context.models.check();
    const appliers = await this.context.apply.check();
    const errors = [...result.errors, ...appliers.flatMap((a) => a.errors.map((e) => `${a.name}: ${e}`))];
    const warnings = [...result.warnings, ...appliers.flatMap((a) => a.warnings.map((w) => `${a.name}: ${w}`))];
    const unchecked = appliers.filter((a) => !a.checked).map((a) => a.name);
    const info = [
      `${result.objects} object(s) of ${result.kinds.length} kind(s) checked against their declared schemas, unique fields, references and invariants`,
      ...appliers.flatMap((a) => a.info.map((i) => `${a.name}: ${i}`)),
      appliers.length === 0
        ? 'no applier is registered: nothing was compiled'
        : `compiled by ${appliers.filter((a) => a.checked).length} of ${appliers.length} applier(s)${unchecked.length ? `; without an offline check: ${unchecked.join(', ')}` : ''}`,
    ];
    return {
      valid: errors.length === 0,
      errors,
      warnings,
      info,
      checked: {
        objects: result.objects,
        kinds: result.kinds,
        appliers: appliers.map((a) => ({ name: a.name, compiled: a.checked, errors: a.errors.length, warnings: a.warnings.length })),
      },
    };
  }

  /** What the model would refuse in a candidate configuration (an import, a restore), checked in a store of its own. */
  checkCandidate(objects: readonly ConfigObject[]): ConfigurationCheck {
    const scratch = scratchStore(objects, this.context.clock);
    try {
      return this.context.models.check(scratch.store);
    } finally {
      scratch.close();
    }
  }

  /**
   * Replaces the whole configuration through the model (whose change hooks then see the new data) and applies it
   * under the apply lock. When applying fails, the previous configuration is put back and re-applied (unless
   * keepOnFailure: the commit-confirm rollback keeps its target).
   */
  async replaceAndApply(objects: readonly ConfigObject[], meta: { actor: string; comment: string; source: VersionSource }, options: { keepOnFailure?: boolean } = {}): Promise<ReplaceOutcome> {
    const { store } = this.context;
    return this.context.apply.exclusive(async (tx) => {
      const previous = store.snapshot();
      await this.replace(objects);
      try {
        const outcome = await tx.apply(meta.actor, meta.comment, { source: meta.source });
        return { record: outcome.version!, appliers: outcome.results.map(({ name, ok, ms }) => ({ name, ok, ms })) };
      } catch (error) {
        if (options.keepOnFailure || !(error instanceof ApplyFailed)) throw error;
        await this.replace(previous);
        await tx.apply(meta.actor, null, { record: false }).catch((again) => this.context.log.error({ err: again }, 're-applying the previous configuration failed'));
        throw new HttpError(error.statusCode, `${error.message}; the previous configuration was put back`);
      }
    });
  }

  /** The replacement is done once the store holds it; a change hook failing after it is logged, and the apply still runs. */
  private async replace(objects: readonly ConfigObject[]): Promise<void> {
    await this.context.models.replaceAll(objects).catch((error) => this.context.log.error({ err: error }, 'a change hook failed after the configuration was replaced'));
  }

  /**
   * 409 when the interface settings of `target` would take away the address the request reached, unless the
   * caller confirmed it: the rule of PUT /interfaces/config/{name}, held for restore and import alike.
   */
  private async assertNoManagementCut(target: readonly ConfigObject[], actor: Actor, what: string): Promise<void> {
    if (!actor.localAddress || actor.confirmManagementCut) return;
    const cut = replacementCut(await this.context.platform.network.interfaces(), target, actor.localAddress);
    if (cut) throw conflict(`${what} ${cut} (the address this request reached); send ?confirm_management_cut=true to apply it anyway`);
  }

  /** 403 when replacing the configuration with `target` would change a section the actor cannot write. */
  private assertMayReplaceWith(target: readonly ConfigObject[], actor: Actor, what: string): void {
    if (actor.permissions === undefined) return;
    const diff = diffConfigurations(this.context.store.snapshot(), target, { kinds: this.context.store.kinds, sealer: this.context.sealer, labels: ['current', 'target'] });
    assertNoRefusedSections(refusedSections(diff, this.context.store.kinds, actor.permissions), what);
  }

  restorePreview(version: number, actor?: Actor) {
    const record = this.requireVersion(version);
    const target = this.contentOf(version);
    const diff = diffConfigurations(this.context.store.snapshot(), target, {
      kinds: this.context.store.kinds, sealer: this.context.sealer, labels: ['current', `version ${version}`],
    });
    const check = this.checkCandidate(target);
    const refused = refusedSections(diff, this.context.store.kinds, actor?.permissions);
    return {
      version: this.withActive(record), valid: check.errors.length === 0 && refused.length === 0, errors: check.errors, warnings: check.warnings,
      refused_sections: refused, diff,
    };
  }

  async restore(version: number, actor: Actor, force = false): Promise<ReplaceOutcome> {
    this.requireVersion(version);
    const target = this.contentOf(version);
    try {
      this.assertMayReplaceWith(target, actor, `restoring version ${version}`);
      // The version is held to what a direct write would accept today, as an import is.
      const { errors } = this.checkCandidate(target);
      if (errors.length > 0) throw badRequest(`restore refused: version ${version} has ${errors.length} problem(s): ${errors.slice(0, 5).join('; ')}`);
      await this.assertNoManagementCut(target, actor, `restoring version ${version}`);
      await this.context.apply.gate(target, { actor: actor.name, clientIp: actor.clientIp, force, what: `restore of version ${version}` });
      const outcome = await this.replaceAndApply(target, { actor: actor.name, comment: `restore of version ${version}`, source: 'restore' });
      this.audit.record({ action: 'config.restore', outcome: 'success', actor: actor.name, clientIp: actor.clientIp, details: `version ${version} restored as version ${outcome.record.version}` });
      return outcome;
    } catch (error) {
      this.audit.record({ action: 'config.restore', outcome: 'failure', actor: actor.name, clientIp: actor.clientIp, details: `version ${version}: ${(error as Error).message}` });
      throw error;
    }
  }

  retention() {
    const policy = this.versions.retention();
    return {
      ...policy,
      current_count: this.versions.list(1, 0).total,
      protected_versions: this.protectedVersions(),
    };
  }

  setRetention(patch: Partial<RetentionPolicy>, actor: Actor) {
    const policy = { ...this.versions.retention(), ...patch };
    this.versions.setRetention(policy);
    const pruned = this.prune();
    this.audit.record({ action: 'config.retention', outcome: 'success', actor: actor.name, clientIp: actor.clientIp, details: JSON.stringify({ ...policy, pruned: pruned.length }) });
    return { ...this.retention(), pruned };
  }

  protectedVersions(): number[] {
    return [this.versions.activeVersion(), this.rollbackTarget()].filter((v): v is number => v !== null);
  }

  prune(): number[] {
    return this.versions.prune(this.protectedVersions());
  }

  /** The whole configuration as a versioned document; secrets redacted, or wrapped under a passphrase. */
  async exportDocument(passphrase?: string, actor?: Actor): Promise<ExportDocument> {
    const { store, sealer } = this.context;
    const objects = store.snapshot();
    let keys: ExportKeys | undefined;
    let kdf: ExportDocument['kdf'];
    if (passphrase !== undefined) ({ keys, kdf } = await newExportKeys(passphrase));
    let secretCount = 0;
    const exported = objects.map((object) => ({
      ...object,
      data: mapSecrets(object.data, store.kinds.secretFields(object.kind), (value, path) => {
        secretCount++;
        // A caller takes away only the secrets it could have set itself: others stay redacted, as in a plain export.
        if (!keys || !holds(store.kinds.writeAccessOf(object.kind), actor?.permissions)) return REDACTED;
        const plain = Sealer.isSealed(value) ? sealer.open(value) : value;
        return wrapSecret(keys, plain, object.kind, object.id, pathText(path));
      }),
    }));
    const body: Omit<ExportDocument, 'integrity'> = {
      format: EXPORT_FORMAT,
      format_version: EXPORT_FORMAT_VERSION,
      app_version: BUILD.version,
      exported_at: isoTime(this.context.clock.now()),
      source_version: this.versions.activeVersion(),
      config_hash: this.versions.currentHash(),
      secrets: keys ? 'passphrase' : 'redacted',
      secret_count: secretCount,
      ...(kdf ? { kdf } : {}),
      objects: exported,
    };
    return { ...body, integrity: integrityOf(body, keys) };
  }

  /** Reads, authenticates and resolves an export document into objects ready for the store, and checks them. */
  async prepareImport(body: Record<string, unknown>): Promise<PreparedImport> {
    const { store, sealer } = this.context;
    const document = readExportDocument(body);
    const passphrase = typeof body.passphrase === 'string' ? body.passphrase : undefined;
    let keys: ExportKeys | undefined;
    if (document.secrets === 'passphrase') {
      if (passphrase === undefined) throw badRequest('body.passphrase is required: this export wraps its secrets under a passphrase');
      keys = await openExportKeys(passphrase, document.kdf!);
    }
    verifyIntegrity(document, keys);
    const live = new Map(store.snapshot().map((o) => [o.id, o]));
    const unresolved: string[] = [];
    let count = 0;
    const now = isoTime(this.context.clock.now());
    const isMarker = (value: string) => value.startsWith(WRAPPED_PREFIX) || value === REDACTED || Sealer.isSealed(value);
    const objects = document.objects.map((object) => ({
      kind: object.kind,
      id: object.id,
      position: object.position,
      created_at: object.created_at ?? now,
      updated_at: object.updated_at ?? now,
      data: mapSecrets(object.data, store.kinds.secretFields(object.kind), (value, path) => {
        const where = `${object.kind} ${object.id} ${pathText(path)}`;
        count++;
        if (value.startsWith(WRAPPED_PREFIX)) {
          if (!keys) throw badRequest(`body.objects: ${where}: a passphrase-wrapped secret in a redacted export`);
          return sealer.seal(unwrapSecret(keys, value, object.kind, object.id, pathText(path)));
        }
        if (value === REDACTED) {
          const current = live.get(object.id);
          const kept = current && current.kind === object.kind ? valueAt(current.data, path) : undefined;
          if (typeof kept === 'string' && kept !== '' && kept !== REDACTED) return Sealer.isSealed(kept) ? kept : sealer.seal(kept);
          unresolved.push(where);
          return value;
        }
        if (Sealer.isSealed(value)) {
          try {
            sealer.open(value);
            return value;
          } catch {
            throw badRequest(`body.objects: ${where}: sealed by another appliance; export with a passphrase to move secrets`);
          }
        }
        return sealer.seal(value); // a plaintext secret typed into the file by hand
      }, isMarker),
    }));
    const check = this.checkCandidate(objects);
    return { document, objects, secrets: { state: document.secrets, count }, unresolved, errors: check.errors, warnings: check.warnings };
  }

  async importPreview(body: Record<string, unknown>, actor?: Actor) {
    const prepared = await this.prepareImport(body);
    const diff = diffConfigurations(this.context.store.snapshot(), prepared.objects, {
      kinds: this.context.store.kinds, sealer: this.context.sealer, labels: ['current', 'import'],
    });
    const refused = refusedSections(diff, this.context.store.kinds, actor?.permissions);
    return {
      valid: prepared.errors.length === 0 && prepared.unresolved.length === 0 && refused.length === 0,
      refused_sections: refused,
      format_version: prepared.document.format_version,
      app_version: prepared.document.app_version,
      exported_at: prepared.document.exported_at,
      source_version: prepared.document.source_version,
      objects: prepared.objects.length,
      secrets: prepared.secrets,
      unresolved_secrets: prepared.unresolved,
      errors: prepared.errors,
      warnings: prepared.warnings,
      diff,
    };
  }

  /** Import: all or nothing. Any problem is a 400 before the store is touched; then replace and apply. */
  async importDocument(body: Record<string, unknown>, actor: Actor, source: VersionSource = 'import', label = 'import', force = false): Promise<ReplaceOutcome & { objects: number }> {
    let prepared: PreparedImport;
    try {
      prepared = await this.prepareImport(body);
      if (prepared.unresolved.length > 0) {
        throw badRequest(`import refused: ${prepared.unresolved.length} redacted secret(s) have no counterpart on this appliance (${prepared.unresolved.slice(0, 5).join('; ')}); export with a passphrase instead`);
      }
      if (prepared.errors.length > 0) {
        throw badRequest(`import refused: ${prepared.errors.length} problem(s): ${prepared.errors.slice(0, 5).join('; ')}`);
      }
      this.assertMayReplaceWith(prepared.objects, actor, 'this import');
      await this.assertNoManagementCut(prepared.objects, actor, 'this import');
      await this.context.apply.gate(prepared.objects, { actor: actor.name, clientIp: actor.clientIp, force, what: label });
    } catch (error) {
      this.audit.record({ action: `config.${label}`, outcome: 'failure', actor: actor.name, clientIp: actor.clientIp, details: (error as Error).message });
      throw error;
    }
    const { record, appliers } = await this.replaceAndApply(prepared.objects, {
      actor: actor.name,
      comment: `${label} of an export from ${prepared.document.exported_at}${prepared.document.source_version !== null ? ` (version ${prepared.document.source_version} there)` : ''}`,
      source,
    });
    this.audit.record({ action: `config.${label}`, outcome: 'success', actor: actor.name, clientIp: actor.clientIp, details: `${prepared.objects.length} objects; version ${record.version}` });
    return { record, appliers, objects: prepared.objects.length };
  }
}

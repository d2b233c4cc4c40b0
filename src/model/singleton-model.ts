import type { ValidateFunction } from 'ajv';
import { problemOf } from '../core/errors.js';
import type { ConfigData } from '../store/config-store.js';
import type { ModelSite } from './collection-model.js';
import type { SingletonDeclaration } from './declarations.js';
import { withoutDefaults } from './schema-helpers.js';
import { assertValid, compileBodyValidator, describeValidationErrors } from './validation.js';

/**
 * A settings section: one object, read with its defaults filled in, written as a patch of the fields sent.
 * Declared with a TypeBox object, its data `D` has that object's static type (see DataOf).
 */
export class SingletonModel<D extends ConfigData = ConfigData> {
  readonly declaration: SingletonDeclaration;
  /** The section as read (secrets left out), and a patch of it (any subset of fields, no defaults). */
  readonly schemas: { view: object; patch: object };
  private readonly validateVisible: ValidateFunction;
  private readonly writeOnly: ReadonlySet<string>;

  constructor(declaration: SingletonDeclaration, private readonly site: Pick<ModelSite, 'store' | 'sealer' | 'changed'>) {
    this.declaration = declaration;
    this.writeOnly = new Set(declaration.writeOnly ?? []);
    const visible = Object.fromEntries(Object.entries(declaration.schema.properties).filter(([k]) => !this.writeOnly.has(k)));
    this.validateVisible = compileBodyValidator({ ...declaration.schema, properties: visible, required: [], additionalProperties: false });
    this.schemas = {
      view: { type: 'object', properties: visible, additionalProperties: false },
      patch: { ...withoutDefaults(declaration.schema), required: [], additionalProperties: false },
    };
  }

  get kind(): string {
    return this.declaration.kind;
  }

  get noun(): string {
    return this.declaration.noun;
  }

  /** What a direct write would refuse in stored data (schema, then the section's own invariants), for import and restore checks. */
  problemWith(data: ConfigData): string | undefined {
    const visible = structuredClone(this.visible(data));
    if (!this.validateVisible(visible)) return describeValidationErrors(this.validateVisible.errors ?? [], this.kind);
    return problemOf(() => this.declaration.validate?.({ ...data, ...visible }));
  }

  /** The current values (defaults filled in), secrets still sealed. */
  read(): D {
    const data: ConfigData = { ...(this.site.store.getSingleton(this.kind) ?? {}) };
    const visible = this.visible(data);
    this.validateVisible(visible); // fills defaults for fields never written
    return { ...data, ...visible } as D; // every write was validated against the schema
  }

  visible(data: ConfigData): ConfigData {
    return Object.fromEntries(Object.entries(data).filter(([k]) => !this.writeOnly.has(k)));
  }

  /** Opens a sealed secret for the service that needs it. */
  secret(field: string): string | undefined {
    const value = this.read()[field];
    return typeof value === 'string' && value !== '' ? this.site.sealer.open(value) : undefined;
  }

  /**
   * The section as `write(patch)` would store it, validated (400 as a write would answer), without storing it:
   * for a write that must be put in force on the host before it is stored. Write-only fields are as sent.
   */
  preview(patch: ConfigData): D {
    const merged: ConfigData = { ...this.read(), ...patch };
    assertValid(this.validateVisible, this.visible(merged));
    this.declaration.validate?.(merged);
    return merged as D;
  }

  /** Changes the fields `patch` sends; a write-only field sent as "" is cleared, one not sent keeps its sealed value. */
  write(patch: ConfigData): D {
    const current = this.read();
    const merged: ConfigData = this.preview(patch);
    for (const field of this.writeOnly) {
      const value = patch[field];
      if (typeof value === 'string') merged[field] = value === '' ? '' : this.site.sealer.seal(value);
      else if (current[field] !== undefined) merged[field] = current[field];
    }
    const stored = this.site.store.putSingleton(this.kind, merged);
    this.site.changed(this.kind);
    return stored as D;
  }
}

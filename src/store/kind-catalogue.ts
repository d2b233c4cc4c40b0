import type { RouteAccess } from '../core/permissions.js';
import type { ConfigData } from './config-store.js';

/** What the configuration store knows about one kind of object, whoever declared it. */
export interface KindDeclaration {
  kind: string;
  /** A declared collection (many objects) or a settings section (one object). */
  shape: 'collection' | 'singleton';
  /** Secret fields: sealed at rest, never serialised; exports redact or wrap them. */
  writeOnly: readonly string[];
  /** Schema and invariant check of stored data (secrets excluded); returns the first problem, or undefined when valid. */
  check?: (data: ConfigData) => string | undefined;
  /** What a direct write of this kind needs; import, restore and export hold callers to the same. */
  writeAccess?: RouteAccess;
}

/**
 * What changing a kind needs when no area declared it (hand-kept sections, kinds of other builds): the
 * administrator's settings permission, so nothing reaches the store through a side door with less.
 */
export const UNDECLARED_WRITE_ACCESS: RouteAccess = 'settings:write';

/**
 * Every kind declared against one store (by collections and settings sections), so whole-configuration work —
 * export redaction, passphrase wrapping, checks — can enumerate the secret fields and schemas of every kind
 * without knowing the areas.
 */
export class KindCatalogue {
  private readonly byKind = new Map<string, KindDeclaration>();

  /** Declaring a kind again replaces the earlier declaration (a settings section may be built more than once). */
  declare(declaration: KindDeclaration): void {
    this.byKind.set(declaration.kind, declaration);
  }

  get(kind: string): KindDeclaration | undefined {
    return this.byKind.get(kind);
  }

  all(): KindDeclaration[] {
    return [...this.byKind.values()];
  }

  /** The permission that writing the kind needs (the declared one, or the administrator's for undeclared kinds). */
  writeAccessOf(kind: string): RouteAccess {
    return this.byKind.get(kind)?.writeAccess ?? UNDECLARED_WRITE_ACCESS;
  }

  secretFields(kind: string): readonly string[] {
    return this.byKind.get(kind)?.writeOnly ?? [];
  }
}

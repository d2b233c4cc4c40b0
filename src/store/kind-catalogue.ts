import type { ConfigData } from './config-store.js';

/** What the configuration store knows about one kind of object, whoever declared it. */
export interface KindDeclaration {
  kind: string;
  /** A declared collection (many objects) or a settings section (one object). */
  shape: 'collection' | 'singleton';
  /** Secret fields: sealed at rest, never serialised; exports redact or wrap them. */
  writeOnly: readonly string[];
  /** Schema check of stored data (secrets excluded); returns the first problem, or undefined when valid. */
  check?: (data: ConfigData) => string | undefined;
}

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

  secretFields(kind: string): readonly string[] {
    return this.byKind.get(kind)?.writeOnly ?? [];
  }
}

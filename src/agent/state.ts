import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Sealer } from '../core/crypto.js';
import type { RulePlacement } from './rule-order.js';

export interface AttemptRecord {
  outcome: 'applying' | 'applied' | 'failed';
  reason: string | null;
  at: string;
}

export interface SectionObjects {
  sections: Record<string, Record<string, unknown>[]>;
  /** Where the owned rules go among the appliance's own (rule-order.ts); absent: each at the priority it gives. */
  rule_placement?: RulePlacement;
}

/** What an enrolled agent keeps: its identity with the controller and every revision it ever attempted. */
export interface AgentState {
  controller_url: string;
  appliance_id: string;
  ca_pem: string;
  certificate_pem: string;
  private_key_pem: string;
  /** The X25519 key that opens the secrets the controller sealed for this appliance (absent: enrolled before them). */
  sealing_private_key_pem?: string;
  /** Revision number → what became of it. A number here is never applied again. */
  attempts: Record<string, AttemptRecord>;
  applied_revision: number;
  /** The document of the applied revision: what the templates own on this appliance (drift is measured against it). */
  applied_document: SectionObjects | null;
  /** Appliance-side credential of the applier (sealed at rest), when the applier needs one. */
  applier_secret?: string;
}

export interface AgentStateStore {
  load(): AgentState | null;
  save(state: AgentState): void;
  clear(): void;
}

/** Held in memory (the light agents of the scale tests and the bench). */
export class MemoryStateStore implements AgentStateStore {
  private state: AgentState | null = null;
  load() {
    return this.state ? structuredClone(this.state) : null;
  }
  save(state: AgentState) {
    this.state = structuredClone(state);
  }
  clear() {
    this.state = null;
  }
}

/**
 * A file in the appliance's data directory (mode 0600), replaced atomically; the private keys and the applier's
 * credential are sealed with the appliance's key (secrets.key), so the file alone reveals neither.
 */
export class FileStateStore implements AgentStateStore {
  constructor(
    private readonly path: string,
    private readonly sealer: Sealer,
  ) {}

  load(): AgentState | null {
    if (!existsSync(this.path)) return null;
    const stored = JSON.parse(readFileSync(this.path, 'utf8')) as AgentState;
    return {
      ...stored,
      private_key_pem: this.sealer.open(stored.private_key_pem),
      ...(stored.sealing_private_key_pem ? { sealing_private_key_pem: this.sealer.open(stored.sealing_private_key_pem) } : {}),
      ...(stored.applier_secret ? { applier_secret: this.sealer.open(stored.applier_secret) } : {}),
    };
  }

  save(state: AgentState): void {
    const sealed = {
      ...state,
      private_key_pem: this.sealer.seal(state.private_key_pem),
      ...(state.sealing_private_key_pem ? { sealing_private_key_pem: this.sealer.seal(state.sealing_private_key_pem) } : {}),
      ...(state.applier_secret ? { applier_secret: this.sealer.seal(state.applier_secret) } : {}),
    };
    const temporary = `${this.path}.tmp`;
    writeFileSync(temporary, JSON.stringify(sealed), { mode: 0o600 });
    renameSync(temporary, this.path);
  }

  clear(): void {
    if (existsSync(this.path)) renameSync(this.path, `${this.path}.removed`);
  }
}

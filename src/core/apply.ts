import type { FastifyBaseLogger } from 'fastify';
import { HttpError } from './errors.js';
import { Semaphore } from './semaphore.js';
import type { ConfigVersions, VersionRecord, VersionSource } from '../store/config-versions.js';
import type { ConfigObject } from '../store/config-store.js';

/** Pushes one area's stored configuration to the system (render, check, load, restart a daemon). */
export type Applier = () => Promise<void>;

/** What an applier's dry check found: whether its configuration would compile and load. */
export interface ApplierCheck {
  errors: string[];
  warnings?: string[];
  info?: string[];
}

export interface ApplierHooks {
  /** Renders and checks without applying (e.g. `nft -c -f`); absent when the area has no offline check. */
  check?: () => Promise<ApplierCheck> | ApplierCheck;
}

export interface ApplierResult {
  name: string;
  ok: boolean;
  ms: number;
  error?: string;
  /** The HTTP status the failure carried (503: a program is not installed). */
  status?: number;
}

export interface ApplyOptions {
  source?: VersionSource;
  /** false: run the appliers without recording a version (re-applying a previous state after a failure). */
  record?: boolean;
}

export interface ApplyOutcome {
  /**
   * The version recorded for this apply, or the active version when a plain apply changed nothing since it;
   * undefined when `record: false`.
   */
  version?: VersionRecord;
  results: ApplierResult[];
}

export interface AppliedEvent {
  version: VersionRecord;
  actor: string;
  comment: string | null;
  results: ApplierResult[];
}

/**
 * Some applier failed: no version was recorded; `results` says which ones. 409: the stored configuration
 * conflicts with what the system accepts (a compiler, checker or kernel refused it); the message carries why.
 */
export class ApplyFailed extends HttpError {
  constructor(readonly results: ApplierResult[]) {
    const failed = results.filter((r) => !r.ok);
    // 503 only when nothing but missing programs stood in the way; any refusal makes it a conflict.
    super(failed.every((r) => r.status === 503) ? 503 : 409, `apply failed: ${failed.map((r) => `${r.name}: ${r.error}`).join('; ')}`);
  }
}

/** Who asks for an apply, and whether they override what the pre-apply checks find (`force`, audited by the check). */
export interface GateRequest {
  actor: string;
  clientIp?: string | null;
  force?: boolean;
  /** What is being applied, for the refusal and the audit trail: `reload`, `restore of version 4`, `import`. */
  what: string;
  /** Findings present before the change (a change set is judged on what it breaks, not on what was broken already). */
  ignore?: ReadonlySet<string>;
}

/**
 * A check a candidate configuration must pass before it is applied (the transit assertions). `prepare` reads what
 * the check needs from the system (asynchronous); `check` then judges the candidate — the stored configuration,
 * or the objects a restore or import would put in its place — and throws the refusal (409) unless forced.
 * Synchronous, so a change set can run it inside its store transaction.
 */
export interface ApplyGate {
  prepare(): Promise<void>;
  check(candidate: 'stored' | readonly ConfigObject[], request: GateRequest): void;
  /** The keys of what the check finds against a candidate (for GateRequest.ignore). */
  findings(candidate: 'stored' | readonly ConfigObject[]): string[];
}

/** Runs a function while holding the apply lock; `apply` inside it runs the appliers without re-taking the lock. */
export interface ApplyTransaction {
  apply(actor: string, comment?: string | null, options?: ApplyOptions): Promise<ApplyOutcome>;
}

/**
 * The apply coordinator: areas register an applier each; applyAll runs them all, one apply at a time, and
 * on success records a configuration version (the new active version) unless the active version already holds
 * exactly the stored configuration. Restore, import and the
 * commit-confirm rollback replace the stored configuration and apply it under the same lock.
 */
export class ApplyCoordinator {
  private readonly appliers = new Map<string, { apply: Applier; hooks: ApplierHooks }>();
  private readonly listeners = new Set<(event: AppliedEvent) => void>();
  private readonly lock = new Semaphore(1);
  private readonly gates: ApplyGate[] = [];

  constructor(
    readonly versions: ConfigVersions,
    private readonly log: FastifyBaseLogger,
  ) {}

  register(name: string, apply: Applier, hooks: ApplierHooks = {}): void {
    if (this.appliers.has(name)) throw new Error(`applier ${name} registered twice`);
    this.appliers.set(name, { apply, hooks });
  }

  addGate(gate: ApplyGate): void {
    this.gates.push(gate);
  }

  /** Every pre-apply check against a candidate: throws the first refusal. The commit-confirm rollback never calls it. */
  async gate(candidate: 'stored' | readonly ConfigObject[], request: GateRequest): Promise<void> {
    for (const gate of this.gates) await gate.prepare();
    this.gateSync(candidate, request);
  }

  /** The checks alone, after `prepareGates` (inside a store transaction). */
  gateSync(candidate: 'stored' | readonly ConfigObject[], request: GateRequest): void {
    for (const gate of this.gates) gate.check(candidate, request);
  }

  async prepareGates(): Promise<void> {
    for (const gate of this.gates) await gate.prepare();
  }

  gateFindings(candidate: 'stored' | readonly ConfigObject[]): Set<string> {
    return new Set(this.gates.flatMap((gate) => gate.findings(candidate)));
  }

  names(): string[] {
    return [...this.appliers.keys()];
  }

  onApplied(listener: (event: AppliedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  applyAll(actor: string, comment?: string | null, options: ApplyOptions = {}): Promise<ApplyOutcome> {
    return this.exclusive((tx) => tx.apply(actor, comment, options));
  }

  /** Holds the apply lock for a replace-then-apply sequence so no other apply interleaves. */
  exclusive<T>(fn: (tx: ApplyTransaction) => Promise<T>): Promise<T> {
    return this.lock.run(() => fn({ apply: (actor, comment, options) => this.runAppliers(actor, comment ?? null, options ?? {}) }));
  }

  /** Every applier's dry check; appliers without a check hook are reported as such, not as passed. */
  async check(): Promise<{ name: string; checked: boolean; errors: string[]; warnings: string[]; info: string[] }[]> {
    const reports = [];
    for (const [name, { hooks }] of this.appliers) {
      if (!hooks.check) {
        reports.push({ name, checked: false, errors: [], warnings: [], info: [] });
        continue;
      }
      try {
        const result = await hooks.check();
        reports.push({ name, checked: true, errors: result.errors, warnings: result.warnings ?? [], info: result.info ?? [] });
      } catch (error) {
        reports.push({ name, checked: true, errors: [`check failed: ${(error as Error).message}`], warnings: [], info: [] });
      }
    }
    return reports;
  }

  private async runAppliers(actor: string, comment: string | null, options: ApplyOptions): Promise<ApplyOutcome> {
    const results: ApplierResult[] = [];
    // The version's hash depends on the stored configuration alone: computed while the appliers wait on the system
    // (the kernel taking a ruleset, a daemon reloading), it is ready when the version is recorded.
    const hashWhileWaiting = options.record === false ? undefined : setImmediate(() => this.versions.currentHash());
    // Every applier runs even after one fails, so one broken area does not leave the others stale.
    for (const [name, { apply }] of this.appliers) {
      const started = performance.now();
      try {
        await apply();
        results.push({ name, ok: true, ms: Math.round(performance.now() - started) });
      } catch (error) {
        results.push({ name, ok: false, ms: Math.round(performance.now() - started), error: (error as Error).message, ...(error instanceof HttpError ? { status: error.statusCode } : {}) });
      }
    }
    clearImmediate(hashWhileWaiting);
    if (results.some((r) => !r.ok)) {
      this.log.warn({ results }, 'apply failed');
      throw new ApplyFailed(results);
    }
    if (options.record === false) return { results };
    const source = options.source ?? 'apply';
    // A plain apply (reload, commit-confirm) of the configuration the active version already holds adds no
    // history: that version is still what runs. Restore, import and rollback are events and always recorded.
    const unchanged = source === 'apply' ? this.versions.activeIfCurrent() : undefined;
    const version = unchanged ?? this.versions.record({ actor, comment, source, applied: true });
    for (const listener of this.listeners) {
      try {
        listener({ version, actor, comment, results });
      } catch (error) {
        this.log.warn({ err: error }, 'onApplied listener failed');
      }
    }
    return { version, results };
  }
}

import type { AppContext } from '../../context.js';
import { isoTime } from '../../core/clock.js';
import { conflict, HttpError } from '../../core/errors.js';
import type { Permission } from '../../core/permissions.js';
import type { ConfigObject } from '../../store/config-store.js';
import { holds } from './section-access.js';
import { CONFIG_TOPICS, type Actor, type ConfigService } from './service.js';
import type { JudgedAssertion } from '../assertions/service.js';

/** An open commit-confirm window, as persisted in config_meta (it survives a restart). */
export interface CommitConfirmWindow {
  started_at: string;
  started_by: string;
  expires_at_ms: number;
  timeout_seconds: number;
  description: string;
  rollback_version: number;
  /**
   * What the opener held: the rollback restores only the sections (kinds) these permissions write. Absent for
   * the appliance's own windows and for windows persisted before this field existed (they restore everything).
   */
  opener_permissions?: Permission[];
  /** Confirm by itself once every assertion holds after the apply and the client that opened the window is back. */
  auto_confirm?: boolean;
  /** The address the window was opened from (with started_by, the client auto-confirm waits for). */
  started_from?: string | null;
  /** When the last apply inside the window finished; requests from the client count from then. */
  applied_at_ms?: number | null;
  client_seen?: boolean;
  /** The assertions checked after that apply. */
  checks?: WindowChecks;
}

export interface WindowChecks {
  state: 'running' | 'held' | 'failed';
  started_at: string;
  finished_at: string | null;
  results: JudgedAssertion[];
}

/** Runs every enabled assertion after an apply (areas/assertions); `onResult` hears each as it finishes. */
export type AppliedVerifier = (onResult: (judged: JudgedAssertion) => void) => Promise<JudgedAssertion[]>;

/** How the last window ended. */
export interface CommitConfirmOutcome {
  outcome: 'confirmed' | 'rolled_back' | 'rollback_failed' | 'apply_failed';
  at: string;
  rollback_version: number;
  /** The version recorded by the rollback's apply. */
  new_version?: number;
  /** The state the rollback discarded, kept as a version so it can be restored. */
  discarded_version?: number;
  error?: string;
  /** The appliers the rollback's apply ran (networking, packet filter, daemons, …). */
  appliers?: { name: string; ok: boolean; ms: number }[];
  confirmed_by?: string;
  /** Why the rollback happened (the deadline, a failed apply, an assertion that does not hold). */
  reason?: string;
  /** The assertions checked after the window's apply. */
  checks?: WindowChecks;
}

const WINDOW_KEY = 'commit_confirm';
const LAST_KEY = 'commit_confirm_last';
export const ROLLBACK_ACTOR = 'commit-confirm';
/** Who confirms a window with auto_confirm. */
export const AUTO_CONFIRM_ACTOR = 'auto-confirm';

/**
 * Commit-confirm (Junos `commit confirmed`): opening a window records the running version as the rollback
 * target; unless confirmed before the deadline, the target is restored and re-applied automatically. A timer
 * polls the injected clock, so tests move the clock and call expireIfDue() instead of waiting.
 */
export class CommitConfirm {
  private window: CommitConfirmWindow | undefined;
  private timer: NodeJS.Timeout | undefined;
  private expiring: Promise<boolean> | undefined;

  constructor(
    private readonly context: AppContext,
    private readonly service: ConfigService,
  ) {
    this.window = service.versions.getMeta<CommitConfirmWindow>(WINDOW_KEY);
    service.rollbackTarget = () => this.window?.rollback_version ?? null;
    // Any apply inside an open window (the window's own, a reload, a restore) is checked against the assertions.
    context.apply.onApplied((event) => {
      if (!this.window || event.actor === ROLLBACK_ACTOR) return;
      this.persist({ ...this.window, applied_at_ms: this.context.clock.now(), client_seen: false, checks: undefined });
      this.verifying = this.verifyApplied(this.window.started_at).catch((error: unknown) => this.context.log.error({ err: error }, 'the post-apply assertion check failed'));
    });
  }

  private verifier: AppliedVerifier | undefined;
  private verifying: Promise<void> | undefined;

  verifyWith(verifier: AppliedVerifier): void {
    this.verifier = verifier;
  }

  /** Resolves once the assertion check of the last apply (and what it decided) is done. */
  settled(): Promise<void> {
    return (this.verifying ?? Promise.resolve()).then(() => this.expiring?.then(() => undefined));
  }

  /**
   * After the apply: every assertion is checked; with auto_confirm, the first failure rolls back at once, and when
   * all hold the window is confirmed as soon as its client has reached the API again (sawClient).
   */
  private async verifyApplied(windowStartedAt: string): Promise<void> {
    const current = () => (this.window?.started_at === windowStartedAt ? this.window : undefined);
    const checks: WindowChecks = { state: 'running', started_at: isoTime(this.context.clock.now()), finished_at: null, results: [] };
    const opened = current();
    if (!opened) return;
    this.persist({ ...opened, checks });
    if (!this.verifier) {
      checks.state = 'held';
      checks.finished_at = checks.started_at;
    } else {
      let failedEarly: Promise<unknown> | undefined;
      const results = await this.verifier((judged) => {
        const window = current();
        if (!window) return;
        checks.results = [...checks.results, judged];
        if (!judged.result.holds && window.auto_confirm) {
          // The rest no longer decides anything: the window's outcome keeps what was known when it was rolled back.
          checks.state = 'failed';
          checks.finished_at = isoTime(this.context.clock.now());
        }
        this.persist({ ...window, checks });
        if (!judged.result.holds && window.auto_confirm && !failedEarly) {
          // Rolled back at once, without waiting for the other checks or the timer.
          failedEarly = this.rollbackNow(`assertion "${judged.name}" does not hold after the apply: ${judged.result.detail}`);
        }
      });
      await failedEarly;
      if (!current()) return;
      checks.results = results;
      checks.state = results.every((r) => r.result.holds) ? 'held' : 'failed';
      checks.finished_at = isoTime(this.context.clock.now());
    }
    const window = current();
    if (!window) return;
    this.persist({ ...window, checks });
    this.announce('checked', { state: checks.state, failed: checks.results.filter((r) => !r.result.holds).map((r) => r.name) });
    if (window.auto_confirm && checks.state === 'failed') await this.rollbackNow(`assertions do not hold after the apply: ${checks.results.filter((r) => !r.result.holds).map((r) => `"${r.name}"`).join(', ')}`);
    else await this.autoConfirmIfReady();
  }

  /** Every authenticated request: the window's own client reaching the API after the apply may complete an auto-confirm. */
  async sawClient(username: string, ip: string | undefined): Promise<void> {
    const window = this.window;
    if (!window?.auto_confirm || window.applied_at_ms == null || window.client_seen) return;
    if (username !== window.started_by || (ip ?? null) !== (window.started_from ?? null)) return;
    this.persist({ ...window, client_seen: true });
    await this.autoConfirmIfReady();
  }

  private async autoConfirmIfReady(): Promise<void> {
    const window = this.window;
    if (!window?.auto_confirm || !window.client_seen || window.checks?.state !== 'held') return;
    await this.confirm({ name: AUTO_CONFIRM_ACTOR }, `every assertion held after the apply and ${window.started_by} reached the API again from ${window.started_from ?? 'its address'}`);
  }

  private rollbackNow(reason: string): Promise<unknown> {
    if (!this.window) return Promise.resolve();
    this.expiring ??= this.rollback(reason, 'rolled_back').then(() => true).finally(() => {
      this.expiring = undefined;
    });
    return this.expiring;
  }

  current(): CommitConfirmWindow | undefined {
    return this.window;
  }

  async start(actor: Actor, options: { timeout_seconds: number; description?: string; apply?: boolean; auto_confirm?: boolean; force?: boolean }) {
    await this.expireIfDue();
    if (this.window) {
      throw conflict(`a commit-confirm window is already open (started by ${this.window.started_by}, expires ${isoTime(this.window.expires_at_ms)})`);
    }
    if (options.apply) await this.context.apply.gate('stored', { actor: actor.name, clientIp: actor.clientIp, force: options.force, what: 'the commit-confirm apply' });
    const { versions } = this.service;
    // The target is what the system runs now; before any apply, the stored configuration as it is.
    const target = versions.activeVersion() ?? versions.record({ actor: actor.name, comment: 'commit-confirm rollback target (nothing applied yet)', source: 'commit-confirm', applied: false }).version;
    const now = this.context.clock.now();
    this.persist({
      started_at: isoTime(now),
      started_by: actor.name,
      expires_at_ms: now + options.timeout_seconds * 1000,
      timeout_seconds: options.timeout_seconds,
      description: options.description ?? 'configuration change',
      rollback_version: target,
      ...(actor.permissions ? { opener_permissions: [...actor.permissions].sort() } : {}),
      auto_confirm: options.auto_confirm ?? false,
      started_from: actor.clientIp ?? null,
      applied_at_ms: null,
      client_seen: false,
    });
    this.service.audit.record({ action: 'config.commit_confirm.start', outcome: 'success', actor: actor.name, clientIp: actor.clientIp, details: `rollback target version ${target}, ${options.timeout_seconds} s` });
    this.announce('started', { rollback_version: target, expires_at: isoTime(now + options.timeout_seconds * 1000), started_by: actor.name });
    if (options.apply) {
      try {
        await this.context.apply.applyAll(actor.name, `${options.description ?? 'configuration change'} (commit-confirm)`);
      } catch (error) {
        // The window was open while applying, so a change that cuts the management path is still reverted; a
        // failed apply is reverted at once rather than at the deadline.
        const outcome = await this.rollback(`apply under commit-confirm failed: ${(error as Error).message}`, 'apply_failed');
        throw new HttpError(error instanceof HttpError ? error.statusCode : 500, `${(error as Error).message}; rolled back to version ${outcome.rollback_version}`);
      }
    }
    return this.status();
  }

  async confirm(actor: Actor, why?: string) {
    await this.expireIfDue();
    const window = this.window;
    if (!window) {
      const last = this.last();
      const detail = last && last.outcome !== 'confirmed' ? `; the last window ended at ${last.at} with ${last.outcome} to version ${last.rollback_version}` : '';
      throw conflict(`no commit-confirm window is open${detail}`);
    }
    this.persist(undefined);
    const last: CommitConfirmOutcome = { outcome: 'confirmed', at: isoTime(this.context.clock.now()), rollback_version: window.rollback_version, confirmed_by: actor.name, ...(window.checks ? { checks: window.checks } : {}) };
    this.service.versions.setMeta(LAST_KEY, last);
    this.service.audit.record({ action: 'config.commit_confirm.confirm', outcome: 'success', actor: actor.name, clientIp: actor.clientIp, details: `window opened by ${window.started_by} confirmed${why ? `: ${why}` : ''}` });
    this.announce('confirmed', { confirmed_by: actor.name, rollback_version: window.rollback_version });
    return { message: 'Configuration confirmed: the automatic rollback is cancelled', confirmed: true, active_version: this.service.versions.activeVersion() };
  }

  async status() {
    await this.expireIfDue();
    const window = this.window;
    const now = this.context.clock.now();
    return {
      active: window !== undefined,
      revert_pending: window !== undefined,
      started_at: window?.started_at ?? null,
      started_by: window?.started_by ?? null,
      expires_at: window ? isoTime(window.expires_at_ms) : null,
      seconds_remaining: window ? Math.max(0, Math.ceil((window.expires_at_ms - now) / 1000)) : 0,
      timeout_seconds: window?.timeout_seconds ?? null,
      description: window?.description ?? '',
      rollback_version: window?.rollback_version ?? null,
      auto_confirm: window?.auto_confirm ?? false,
      applied_at: window?.applied_at_ms ? isoTime(window.applied_at_ms) : null,
      client_seen_after_apply: window?.client_seen ?? false,
      assertions: window?.checks ?? null,
      last: this.last() ?? null,
    };
  }

  /** Rolls back when the window's deadline has passed; true when it did. Concurrent callers share one run. */
  expireIfDue(): Promise<boolean> {
    if (!this.window || this.context.clock.now() < this.window.expires_at_ms) return Promise.resolve(false);
    this.expiring ??= this.rollback(`commit-confirm window opened by ${this.window.started_by} at ${this.window.started_at} was not confirmed`, 'rolled_back')
      .then(() => true)
      .finally(() => {
        this.expiring = undefined;
      });
    return this.expiring;
  }

  /** Checks the deadline every intervalMs against the injected clock. */
  startTimer(intervalMs = 1000): void {
    this.stopTimer();
    this.timer = setInterval(() => {
      this.expireIfDue().catch((error) => this.context.log.error({ err: error }, 'commit-confirm rollback failed'));
    }, intervalMs);
    this.timer.unref();
  }

  async stopTimer(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.expiring?.catch(() => undefined);
  }

  private async rollback(reason: string, outcome: 'rolled_back' | 'apply_failed'): Promise<CommitConfirmOutcome> {
    const window = this.window!;
    const { versions } = this.service;
    const rolledAway = versions.activeVersion();
    const result: CommitConfirmOutcome = { outcome, at: '', rollback_version: window.rollback_version, reason, ...(window.checks ? { checks: window.checks } : {}) };
    try {
      const target = this.withinOpenersReach(this.service.contentOf(window.rollback_version), window);
      // The target was running when the window opened: a validator that refuses it today (a host interface gone,
      // a rule tightened) must not keep the appliance on the change being reverted. It is said in the log.
      const { errors } = this.service.checkCandidate(target);
      if (errors.length > 0) this.context.log.warn({ problems: errors.slice(0, 20), rollback_version: window.rollback_version }, 'the commit-confirm rollback target fails validation; restoring it anyway');
      // Nothing is lost: the state being discarded stays in the history.
      if (versions.currentHash() !== versions.get(window.rollback_version)!.hash) {
        result.discarded_version = versions.record({ actor: ROLLBACK_ACTOR, comment: `state discarded by the commit-confirm rollback to version ${window.rollback_version}`, source: 'pre-rollback', applied: false }).version;
      }
      // The rollback is exempt from the management-cut rule: it returns to what ran when the window opened, and
      // no one is there to confirm (restoring the administrator's access is often its very purpose).
      const { record, appliers } = await this.service.replaceAndApply(target, { actor: ROLLBACK_ACTOR, comment: `automatic rollback to version ${window.rollback_version}: ${reason}`, source: 'rollback' }, { keepOnFailure: true });
      result.new_version = record.version;
      result.appliers = appliers;
      if (rolledAway !== null && rolledAway !== window.rollback_version) versions.markRolledBack(rolledAway);
    } catch (error) {
      result.outcome = 'rollback_failed';
      result.error = (error as Error).message;
    }
    result.at = isoTime(this.context.clock.now());
    this.persist(undefined);
    versions.setMeta(LAST_KEY, result);
    this.service.audit.record({
      action: 'config.commit_confirm.rollback', outcome: result.outcome === 'rollback_failed' ? 'failure' : 'success', actor: ROLLBACK_ACTOR,
      details: `${reason}; ${result.outcome} to version ${window.rollback_version}${result.new_version ? ` as version ${result.new_version}` : ''}${result.error ? `: ${result.error}` : ''}`,
    });
    this.context.log.warn({ ...result, reason }, 'commit-confirm rollback');
    this.announce(result.outcome, { ...result, reason });
    return result;
  }

  /**
   * The rollback's configuration: the target version's objects of the sections the opener could write, and the
   * current objects of every other section. A window cannot revert what its opener could not have changed, such
   * as an administrator's later change to users' settings or notification secrets made while it was open.
   */
  private withinOpenersReach(target: readonly ConfigObject[], window: CommitConfirmWindow): ConfigObject[] {
    if (window.opener_permissions === undefined) return [...target];
    const permissions = new Set(window.opener_permissions);
    const { kinds } = this.context.store;
    const reachable = (object: ConfigObject) => holds(kinds.writeAccessOf(object.kind), permissions);
    return [...target.filter(reachable), ...this.context.store.snapshot().filter((object) => !reachable(object))];
  }

  private last(): CommitConfirmOutcome | undefined {
    return this.service.versions.getMeta<CommitConfirmOutcome>(LAST_KEY);
  }

  private persist(window: CommitConfirmWindow | undefined): void {
    this.window = window;
    this.service.versions.setMeta(WINDOW_KEY, window ?? null);
  }

  private announce(event: string, payload: Record<string, unknown>): void {
    this.context.events.emit(CONFIG_TOPICS.commitConfirm, { event, ...payload });
  }
}

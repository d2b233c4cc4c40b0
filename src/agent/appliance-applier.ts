import type { FastifyInstance } from 'fastify';
import type { Applier, ApplyOutcome } from './agent.js';
import type { DriftEntry, Health } from './protocol.js';
import { sectionSpec } from './section-catalogue.js';
import { driftOf, planChanges, type Operation } from './sections.js';
import type { SectionObjects } from './state.js';

/** How long a revision's commit-confirm window lasts when nothing confirms or rolls it back sooner. */
const WINDOW_SECONDS = 120;
const POLL_MS = 250;

interface Answer {
  status: number;
  body: Record<string, unknown> & { error?: string };
}

/**
 * Applies a revision to this appliance through its own API (in-process requests with the agent's API key), so
 * every check a person's change meets applies to the fleet's too: one change set (all or none, refused when it
 * would break a transit assertion), applied inside a commit-confirm window with auto_confirm, which rolls back at
 * once when an assertion fails after the apply and confirms itself when all hold.
 */
export class ApplianceApplier implements Applier {
  constructor(
    private readonly app: FastifyInstance,
    private readonly credential: () => string | undefined,
  ) {}

  async apply(document: SectionObjects, previous: SectionObjects | null): Promise<ApplyOutcome> {
    const status = await this.call('GET', '/api/v1/config/commit-confirm/status');
    if (status.status !== 200) return failed(`the agent cannot read the commit-confirm state (HTTP ${status.status}: ${status.body.error ?? ''})`);
    if (status.body.revert_pending) return failed('a commit-confirm window is open on the appliance: nothing was changed');
    const local = await this.localObjects(Object.keys({ ...document.sections, ...(previous?.sections ?? {}) }));
    const operations = planChanges(document, previous, (section) => local.objects.get(section) ?? [], (section) => local.parents.get(section) ?? new Map());
    if (operations.length === 0) return { outcome: 'applied', reason: 'the appliance already matched the revision' };
    // The window opens first, so its rollback target is the configuration before this revision (on an appliance
    // that never applied anything, the target is the stored configuration as it is when the window opens).
    const opened = await this.call('POST', '/api/v1/config/commit-confirm', { timeout_seconds: WINDOW_SECONDS, apply: false, auto_confirm: true });
    if (opened.status !== 200) return failed(`commit-confirm refused (HTTP ${opened.status}): ${opened.body.error ?? 'no reason given'}; nothing was changed`);
    // Sent as the change set takes them: the template object a body was made from stays here.
    const changed = await this.call('POST', '/api/v1/changes', { operations: operations.map(({ object: _object, ...operation }: Operation & { object?: unknown }) => operation) });
    if (changed.status !== 200) {
      // Nothing was written: the empty window is closed as it found the appliance.
      await this.call('POST', '/api/v1/config/commit-confirm/confirm');
      return failed(`change set refused (HTTP ${changed.status}): ${changed.body.error ?? 'no reason given'}`);
    }
    const applied = await this.call('POST', '/api/v1/reload');
    if (applied.status !== 200 && applied.status !== 202) {
      // Stored but not applied: the window's rollback target is restored (and applied) so nothing of it stays.
      const target = (await this.call('GET', '/api/v1/config/commit-confirm/status')).body.rollback_version;
      if (typeof target === 'number') await this.call('POST', '/api/v1/config/restore', { version: target });
      await this.settle();
      return failed(`apply refused (HTTP ${applied.status}): ${applied.body.error ?? 'no reason given'}; the previous configuration was restored`);
    }
    return this.settle();
  }

  /** Polls the window until it closes: each read is this client coming back after the apply (what auto_confirm waits for). */
  private async settle(): Promise<ApplyOutcome> {
    const deadline = Date.now() + (WINDOW_SECONDS + 30) * 1000;
    while (Date.now() < deadline) {
      const window = await this.call('GET', '/api/v1/config/commit-confirm/status');
      if (window.status === 200 && !window.body.revert_pending) {
        const last = window.body.last as { outcome?: string; reason?: string } | null;
        if (last?.outcome === 'confirmed') return { outcome: 'applied', reason: null };
        return failed(`rolled back on the appliance (${last?.outcome ?? 'unknown'}): ${last?.reason ?? 'no reason given'}`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    return failed('the commit-confirm window neither confirmed nor rolled back in time');
  }

  async health(): Promise<Health> {
    const answer = await this.call('GET', '/api/v1/assertions');
    const assertions = Array.isArray(answer.body) ? (answer.body as { name: string; enabled: boolean; last_result?: { holds: boolean } | null }[]) : [];
    const failing = assertions.filter((a) => a.enabled && a.last_result && !a.last_result.holds).map((a) => a.name);
    return { status: answer.status === 200 && failing.length === 0 ? 'ok' : 'degraded', failing_assertions: failing };
  }

  async drift(applied: SectionObjects): Promise<DriftEntry[]> {
    const local = await this.localObjects(Object.keys(applied.sections));
    return driftOf(applied, (section) => local.objects.get(section) ?? []);
  }

  /** The appliance's objects of each section (a nested one's named by its parent), and the parents by name. */
  private async localObjects(sections: string[]) {
    const objects = new Map<string, Record<string, unknown>[]>();
    const parents = new Map<string, Map<string, string>>();
    for (const section of sections) {
      const spec = sectionSpec(section);
      if (!spec) continue;
      if (spec.singleton) {
        objects.set(section, [(await this.read(spec.path, false)) as Record<string, unknown>]);
      } else if (spec.parent) {
        const { field, child } = spec.parent;
        const found = (await this.read(`${spec.path}?limit=10000`, true)) as Record<string, unknown>[];
        parents.set(section, new Map(found.map((parent) => [String(parent.name), String(parent.id)])));
        const children = await Promise.all(found.map(async (parent) => ((await this.read(`${spec.path}/${String(parent.id)}/${child}?limit=10000`, true)) as Record<string, unknown>[])
          .map((object) => ({ ...object, [field]: parent.name }))));
        objects.set(section, children.flat());
      } else {
        // A collection is read whole (rules in evaluation order).
        objects.set(section, (await this.read(`${spec.path}?limit=10000`, true)) as Record<string, unknown>[]);
      }
    }
    return { objects, parents };
  }

  private async read(url: string, list: boolean): Promise<Record<string, unknown> | Record<string, unknown>[]> {
    const answer = await this.call('GET', url);
    if (answer.status !== 200 || Array.isArray(answer.body) !== list) throw new Error(`reading ${url} answered HTTP ${answer.status}${answer.body.error ? `: ${answer.body.error}` : ''}`);
    return answer.body;
  }

  private async call(method: 'GET' | 'POST', url: string, payload?: unknown): Promise<Answer> {
    const key = this.credential();
    if (!key) return { status: 401, body: { error: 'the agent has no credential on this appliance: enrol it again' } };
    const response = await this.app.inject({ method, url, headers: { authorization: `ApiKey ${key}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
    let body: Answer['body'] = {};
    try {
      body = JSON.parse(response.body) as Answer['body'];
    } catch {
      body = { error: response.body.slice(0, 200) };
    }
    return { status: response.statusCode, body };
  }
}

const failed = (reason: string): ApplyOutcome => ({ outcome: 'failed', reason });

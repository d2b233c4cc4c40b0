/**
 * The activation helper: a small detached program the API starts after it has switched `current` (or for a
 * restart), because the API itself is what gets restarted. It restarts Bulwark through its service manager, waits
 * for the target version to answer ready within the bound, and otherwise puts the previous release back (and asks
 * for the database snapshot to be restored before the database is opened), restarts again and records why.
 *
 *   node activation-helper.js <plan.json>      (the plan file is removed once read)
 */
import { request } from 'node:http';
import { rmSync } from 'node:fs';
import { alive, appendActivation, outcomeFile, readJson, readyFile, restoreFile, writeJsonAtomically, type ActivationOutcome } from './activation-files.js';
import { InstallLayout } from './install-layout.js';
import { restartService, type ServiceManager } from './service-manager.js';

export interface ActivationPlan {
  mode: ActivationOutcome['mode'];
  installRoot: string;
  dataDir: string;
  host: string;
  port: number;
  target: string;
  previous: string | null;
  readySeconds: number;
  /** How many releases stay after a successful switch (at least the current one and the rollback target). */
  keepReleases: number;
  manager: ServiceManager;
  snapshot: string | null;
  keyId: string | null;
  startedAt: string;
  timings: Record<string, number>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Any HTTP answer from the API's own port (a 401 included): the server is listening and routing. */
function answers(host: string, port: number): Promise<boolean> {
  const target = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return new Promise((resolve) => {
    const req = request({ host: target, port, path: '/api/v1/status', timeout: 2000 }, (response) => {
      response.resume();
      resolve(true);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Waits until a process other than `oldPid` says it runs `version` (ready.json) and its port answers. */
async function waitReady(plan: ActivationPlan, version: string, oldPid: number | null): Promise<boolean> {
  const deadline = Date.now() + plan.readySeconds * 1000;
  while (Date.now() < deadline) {
    const marker = readJson<{ version?: string; pid?: number }>(readyFile(plan.dataDir));
    if (marker?.version === version && marker.pid !== oldPid && typeof marker.pid === 'number' && alive(marker.pid) && (await answers(plan.host, plan.port))) return true;
    await sleep(200);
  }
  return false;
}

async function activate(plan: ActivationPlan): Promise<void> {
  const layout = new InstallLayout(plan.installRoot);
  const base = { mode: plan.mode, target: plan.target, previous: plan.previous, key_id: plan.keyId, started_at: plan.startedAt };
  const oldPid = readJson<{ pid?: number }>(readyFile(plan.dataDir))?.pid ?? null;
  const restartAt = Date.now();
  restartService(plan.manager);
  if (await waitReady(plan, plan.target, oldPid)) {
    // Only now is the previous release the one rollback returns to; older ones beyond the kept count go.
    const removed = plan.mode === 'restart' ? [] : layout.prune(plan.keepReleases, [plan.target, plan.previous]);
    const pruned = removed.length ? `; older releases removed: ${removed.join(', ')}` : '';
    const record: ActivationOutcome = { ...base, outcome: 'activated', reason: `${plan.target} answered ready${pruned}`, timings_ms: { ...plan.timings, restart_to_ready: Date.now() - restartAt } };
    writeJsonAtomically(outcomeFile(plan.dataDir), record);
    appendActivation(plan.dataDir, record);
    return;
  }
  const waited = Date.now() - restartAt;
  const reason = `${plan.target} did not answer ready within ${plan.readySeconds} s`;
  if (plan.mode === 'restart' || plan.previous === null) {
    const record: ActivationOutcome = { ...base, outcome: 'failed', reason, timings_ms: { ...plan.timings, waited } };
    writeJsonAtomically(outcomeFile(plan.dataDir), record);
    appendActivation(plan.dataDir, record);
    return;
  }
  // Back to the release that served before: `current` first, so a supervisor's next start already takes it; the
  // snapshot is restored by that release before it opens the database (only that version acts on the request).
  const rollbackAt = Date.now();
  layout.switchTo(plan.previous);
  if (plan.snapshot) writeJsonAtomically(restoreFile(plan.dataDir), { snapshot: plan.snapshot, for_version: plan.previous });
  const record: ActivationOutcome = { ...base, outcome: 'rolled_back', reason: `${reason}; ${plan.previous} was restored${plan.snapshot ? ' with the database snapshot taken before the switch' : ''}`, timings_ms: { ...plan.timings, waited } };
  writeJsonAtomically(outcomeFile(plan.dataDir), record);
  restartService(plan.manager);
  const back = await waitReady(plan, plan.previous, oldPid);
  appendActivation(plan.dataDir, {
    ...record,
    outcome: back ? 'rolled_back' : 'failed',
    reason: back ? record.reason : `${record.reason}, but it did not answer ready either within ${plan.readySeconds} s`,
    timings_ms: { ...record.timings_ms, rollback_to_ready: Date.now() - rollbackAt },
  });
}

const planPath = process.argv[2];
const plan = planPath ? readJson<ActivationPlan>(planPath) : null;
if (!plan) {
  process.stderr.write('bulwark activation helper: usage: activation-helper <plan.json>\n');
  process.exit(2);
}
rmSync(planPath!, { force: true });
activate(plan).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bulwark activation helper: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);

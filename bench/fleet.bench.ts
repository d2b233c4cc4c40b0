import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { ControllerProcess, lightAgent, PG, temporaryDatabase, until } from '../test/helpers/fleet-processes.js';
import { fmt } from './harness.js';

/**
 * The fleet controller with light agents (the agent code over an in-memory stand-in, all in this process): the
 * controller runs compiled in its own process, on a PostgreSQL database of its own. Figures: enrolment, a
 * rollout in waves to every agent, the controller's CPU and PostgreSQL transactions per appliance per minute
 * at idle (agents on the product's 30 s status interval), and the reconnect storm after a controller SIGKILL
 * (agents on the product's backoff: 1 s doubling to 60 s, with jitter). FLEET_AGENTS (default 1000),
 * FLEET_ENROL_CONCURRENCY (enrolments in flight after the first 50, one after another; default 16) and
 * FLEET_IDLE_SECONDS (default 60) size it.
 */
const AGENTS = Number(process.env.FLEET_AGENTS ?? 1000);
const IDLE_SECONDS = Number(process.env.FLEET_IDLE_SECONDS ?? 60);
const CONCURRENCY = Number(process.env.FLEET_ENROL_CONCURRENCY ?? 16);
const SERIAL = Math.min(AGENTS, 50);
const TICKS = 100; // clock ticks per second of /proc/<pid>/stat on Linux

const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
};

async function transactions(name: string): Promise<number> {
  const client = new pg.Client({ ...PG, database: 'postgres' });
  await client.connect();
  const row = (await client.query<{ n: string }>('SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1', [name])).rows[0];
  await client.end();
  return Number(row.n);
}

const database = await temporaryDatabase();
const databaseName = database.url.split('/').at(-1)!;
const controller = await ControllerProcess.start(database.url, { entry: [join(process.cwd(), 'build', 'bench', 'src', 'controller', 'main.js')] });
const timing = { statusIntervalMs: 30_000, backoff: { initialMs: 1000, maxMs: 60_000 } };
const agents: Awaited<ReturnType<typeof lightAgent>>[] = [];
try {
  await controller.signInFirstAdmin();
  const here = async () => (await controller.call('GET', '/api/v1/health')).body.agents_connected_here as number;

  const enrol = async (index: number) => agents.push(await lightAgent(controller, `light-${index}`, { site: `10.${index >> 8}.${index & 255}.1` }, controller, timing));
  // The first SERIAL one after another (the cost of one enrolment), the rest CONCURRENCY at a time (the throughput).
  let started = performance.now();
  for (let index = 0; index < SERIAL; index += 1) await enrol(index);
  console.log(`enrolment of ${SERIAL} agents one after another: ${fmt((performance.now() - started) / SERIAL)} ms each (token, CA fetch, key pairs, CSR, signature)`);
  let next = SERIAL;
  const concurrent = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < AGENTS) await enrol(next++);
  }));
  await until('every agent connected', async () => (await here()) === AGENTS, 600_000);
  console.log(`enrolment and first connection of the other ${AGENTS - SERIAL}, ${CONCURRENCY} at a time: ${fmt((performance.now() - concurrent) / 1000)} s (${fmt((performance.now() - concurrent) / (AGENTS - SERIAL))} ms per agent); all ${AGENTS}: ${fmt((performance.now() - started) / 1000)} s`);

  const template = await controller.call('POST', '/api/v1/templates', { name: 'bench', sections: { aliases: [{ name: 'fleet_web', alias_type: 'host', entries: ['${site}'] }] } });
  started = performance.now();
  const rollout = (await controller.call('POST', '/api/v1/rollouts', { template_id: template.body.id, canary: 10, percentages: [10, 50, 100] })).body.id as string;
  const done = await until('the rollout to complete', async () => {
    const progress = (await controller.call('GET', `/api/v1/rollouts/${rollout}`)).body;
    return progress.state !== 'running' ? progress : undefined;
  }, 600_000);
  console.log(`rollout to ${AGENTS} agents in waves of ${done.waves.map((w: { size: number }) => w.size).join(', ')}: ${fmt((performance.now() - started) / 1000)} s (${done.state}, ${done.applied} applied, ${done.failed} failed)`);
  const twice = agents.filter((a) => a.applier.applies !== 1).length;
  console.log(`agents that applied other than once: ${twice}`);

  // Idle: only status messages (health and drift every 30 s per agent).
  const pid = controller.child!.pid!;
  const [cpuBefore, txBefore] = [cpuSeconds(pid), await transactions(databaseName)];
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const [cpuAfter, txAfter] = [cpuSeconds(pid), await transactions(databaseName)];
  const minutes = IDLE_SECONDS / 60;
  console.log(`idle over ${IDLE_SECONDS} s with ${AGENTS} agents: controller CPU ${fmt(((cpuAfter - cpuBefore) / IDLE_SECONDS) * 100)} % of a core; PostgreSQL ${fmt((txAfter - txBefore) / AGENTS / minutes, 2)} transactions per appliance per minute (${txAfter - txBefore} in all, the 1 s rollout tick included)`);

  // Reconnect storm: SIGKILL, start again, and time until every agent holds a connection to the new process.
  await controller.kill();
  const killedAt = performance.now();
  await controller.spawn();
  const listening = performance.now();
  await until('every agent reconnected', async () => (await here()) === AGENTS, 600_000);
  const reconnected = performance.now();
  const storm = agents.reduce((sum, a) => sum + a.agent.connections, 0) - AGENTS;
  console.log(`reconnect storm after a controller SIGKILL: restart took ${fmt((listening - killedAt) / 1000)} s; every agent reconnected ${fmt((reconnected - listening) / 1000)} s after it listened (${storm} reconnections)`);
} finally {
  await Promise.all(agents.map((a) => a.agent.stop()));
  await controller.close();
  await database.drop();
}

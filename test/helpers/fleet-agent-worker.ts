/**
 * A child process holding many light agents (test/helpers/fleet-light-agents.ts starts it): the agent code with an
 * in-memory state and configuration, each agent enrolled with a token of its own and keeping its own WebSocket.
 * Driven over the IPC channel; it exits when its parent goes (the channel closes), so a test cut short leaves none.
 */
import 'reflect-metadata';
import { Agent, fetch } from 'undici';
import { enrolLightAgent, type LightAgentTiming } from './fleet-processes.js';
import type { LightAgentRecord, WorkerReply, WorkerRequest } from './fleet-light-agents.js';

type Held = Awaited<ReturnType<typeof enrolLightAgent>>;
const agents: Held[] = [];
/** The test is the administrator asking for tokens: the controller's certificate is not checked here. */
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

async function issueToken(controllerUrl: string, apiToken: string, name: string, variables: Record<string, string>): Promise<string> {
  const response = await fetch(`${controllerUrl}/api/v1/enrolment-tokens`, {
    method: 'POST', dispatcher: insecure,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiToken}` },
    body: JSON.stringify({ name, variables }),
  });
  const body = (await response.json()) as { token?: string };
  if (response.status !== 200 || !body.token) throw new Error(`token for ${name}: HTTP ${response.status} ${JSON.stringify(body)}`);
  return body.token;
}

/** Every agent issued a token and enrolled, `concurrency` at a time; ids in the order asked. */
async function enrol(request: Extract<WorkerRequest, { type: 'enrol' }>): Promise<string[]> {
  const ids: string[] = new Array(request.agents.length);
  let next = 0;
  const lane = async () => {
    while (next < request.agents.length) {
      const index = next++;
      const { name, variables } = request.agents[index];
      const token = await issueToken(request.controllerUrl, request.apiToken, name, variables);
      const held = await enrolLightAgent(request.controllerUrl, token, request.timing as LightAgentTiming);
      agents.push(held);
      ids[index] = held.id;
    }
  };
  await Promise.all(Array.from({ length: Math.min(request.concurrency, request.agents.length) }, lane));
  return ids;
}

/** What each agent itself recorded: its attempts, how often its stand-in applied, and the alias it holds. */
function records(): LightAgentRecord[] {
  return agents.map(({ agent, applier, id }) => {
    const status = agent.status();
    return {
      id, connected: status.connected, applies: applier.applies, applied_revision: status.applied_revision,
      attempts: status.attempts.map((attempt) => [attempt.revision, attempt.outcome]),
      aliases: (applier.objects.get('aliases') ?? []).map((alias) => ({ name: String(alias.name), entries: alias.entries as string[] })),
    };
  });
}

/** Checked every 20 ms in this process (the stand-ins' counters, nothing copied), so the test hears of it at once. */
async function reached(count: number): Promise<number> {
  for (;;) {
    const applied = agents.filter(({ applier }) => applier.applies > 0).length;
    if (applied >= count) return applied;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const reply = (message: WorkerReply) => process.send!(message);

process.on('disconnect', () => process.exit(1));
process.on('message', (message: WorkerRequest) => {
  const work = async (): Promise<WorkerReply> => {
    if (message.type === 'enrol') return { type: 'enrolled', seq: message.seq, ids: await enrol(message) };
    if (message.type === 'records') return { type: 'records', seq: message.seq, agents: records() };
    if (message.type === 'watch') return { type: 'reached', seq: message.seq, applied: await reached(message.count) };
    await Promise.all(agents.map(({ agent }) => agent.stop()));
    return { type: 'stopped', seq: message.seq };
  };
  work().then(reply, (error: unknown) => reply({ type: 'failed', seq: message.seq, error: (error as Error).stack ?? String(error) }));
});
reply({ type: 'ready', seq: 0 });

import { connect } from 'node:net';
import { systemSkip } from './system-skip.js';
import { PG } from './fleet-processes.js';

export * from './fleet-processes.js';

/** Does PostgreSQL answer on 127.0.0.1:5432? Mandatory under REQUIRE_SYSTEM_TESTS=1 (.ci/run starts one). */
export async function postgresSkip(what: string): Promise<string | false> {
  const answers = await new Promise<boolean>((resolve) => {
    const socket = connect(PG.port, PG.host);
    socket.setTimeout(1000, () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
    socket.once('connect', () => (socket.end(), resolve(true)));
  });
  if (!answers) return systemSkip(what, { also: [['PostgreSQL answering on 127.0.0.1:5432 (user postgres, trust)', false]] });
  return false;
}


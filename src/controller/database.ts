import pg from 'pg';

export type Pool = pg.Pool;
export type Client = pg.PoolClient;

/** The controller's system of record: one pool per process on BULWARK_CONTROLLER_DB. */
export function openPool(connectionString: string, max = 10): Pool {
  const pool = new pg.Pool({ connectionString, max, application_name: 'bulwark-controller' });
  // An idle client that loses its server (a PostgreSQL restart) must not take the process down.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs `work` in one transaction on one client: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(pool: Pool, work: (client: Client) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Advisory lock keys (one namespace: the first 32-bit half is "BWRK"). */
export const LOCKS: Record<'migrations' | 'firstAccount' | 'ca', [number, number]> = {
  migrations: [0x4257524b, 1],
  firstAccount: [0x4257524b, 2],
  ca: [0x4257524b, 3],
};

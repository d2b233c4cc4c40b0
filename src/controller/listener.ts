import pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { CHANNELS } from './channels.js';

type Handler = (channel: string, payload: string) => void;

/**
 * One dedicated PostgreSQL session LISTENing on the fleet channels (a pooled client cannot listen). When it drops,
 * it reconnects after a second; notifications sent meanwhile are lost, which the rollouts' tick makes up for.
 */
export class NotificationListener {
  private client: pg.Client | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly connectionString: string,
    private readonly handler: Handler,
    private readonly log: FastifyBaseLogger,
  ) {}

  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString, application_name: 'bulwark-controller-listen' });
    const reconnect = () => {
      if (this.stopped || this.client !== client) return;
      this.client = null;
      client.end().catch(() => undefined);
      this.retry = setTimeout(() => void this.start().catch((error: unknown) => this.failed(error)), 1000);
    };
    client.on('error', reconnect);
    client.on('end', reconnect);
    client.on('notification', (message) => this.handler(message.channel, message.payload ?? ''));
    this.client = client;
    await client.connect();
    for (const channel of Object.values(CHANNELS)) await client.query(`LISTEN ${channel}`);
  }

  private failed(error: unknown): void {
    this.log.warn({ err: error }, 'fleet: the LISTEN session could not reconnect; retrying');
    this.retry = setTimeout(() => void this.start().catch((next: unknown) => this.failed(next)), 1000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}

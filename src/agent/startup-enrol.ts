import { readFileSync, rmSync } from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import { HttpError } from '../core/errors.js';
import { OutboundRefused } from '../net/outbound.js';
import { enrolWithController, type EnrolledIdentity } from './enrol.js';

export interface StartupEnrolment {
  controllerUrl: string;
  tokenFile: string;
}

/** First retry after a failed attempt, and the ceiling the doubling stops at. */
const RETRY = { initialMs: 1000, maxMs: 30_000 };

/**
 * Enrolment given at start (`--enrol`, `--enrol-token-file`): tried at once and again with backoff while the
 * controller cannot be reached or the outbound guard refuses it (an administrator may allow it later); a token the
 * controller refuses stops the attempts. The token is read from its file only when spent, never logged, and the
 * file is removed once the enrolment succeeded (a spent token has no further use).
 */
export class StartupEnroller {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private delay = RETRY.initialMs;
  /** The last failure, as shown by GET /api/v1/fleet/agent (never the token). */
  lastError: string | null = null;

  constructor(
    private readonly options: StartupEnrolment,
    private readonly allowList: () => readonly string[],
    private readonly enrolled: (identity: EnrolledIdentity) => void,
    private readonly log: Pick<FastifyBaseLogger, 'info' | 'warn'>,
  ) {}

  start(): void {
    this.stopped = false;
    void this.attempt();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async attempt(): Promise<void> {
    this.timer = null;
    if (this.stopped) return;
    let token: string;
    try {
      token = readFileSync(this.options.tokenFile, 'utf8').trim();
    } catch (error) {
      return this.failed(`the enrolment token file ${this.options.tokenFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, true);
    }
    try {
      const identity = await enrolWithController({ controllerUrl: this.options.controllerUrl, token, allowList: this.allowList(), fields: { url: '--enrol', token: '--enrol-token-file' } });
      if (this.stopped) return;
      this.enrolled(identity);
      rmSync(this.options.tokenFile, { force: true });
      this.lastError = null;
      this.log.info({ controller: identity.controller_url, appliance: identity.appliance_id }, 'fleet: enrolled at start; the spent token file was removed');
    } catch (error) {
      // A refused token (400/401 from the controller, or not a token at all) will not become valid by waiting.
      const final = error instanceof HttpError && error.statusCode === 400 && !(error instanceof OutboundRefused);
      this.failed((error as Error).message, !final);
    }
  }

  private failed(reason: string, retry: boolean): void {
    this.lastError = reason;
    if (!retry || this.stopped) {
      this.log.warn({ reason }, 'fleet: enrolment at start failed; not trying again (give a new token and restart, or enrol through the API)');
      return;
    }
    this.log.warn({ reason, retry_in_ms: this.delay }, 'fleet: enrolment at start failed; trying again');
    this.timer = setTimeout(() => void this.attempt(), this.delay);
    this.delay = Math.min(this.delay * 2, RETRY.maxMs);
  }
}

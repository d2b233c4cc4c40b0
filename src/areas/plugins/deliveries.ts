import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { AppContext } from '../../context.js';
import { Sealer } from '../../core/crypto.js';
import { conflict } from '../../core/errors.js';
import { adminAllowList, adminDestinationProblem, ADMIN_ALLOW_LIST_PATH } from '../../net/admin-allow-list.js';
import { allowListOf } from '../../net/special-addresses.js';
import { postWithRetries } from '../events/webhook.js';

export interface PluginEvent {
  hook: string;
  topic: string;
  at: string;
  payload: Record<string, unknown>;
}

/**
 * Posts on a plugin's behalf: a plugin process is unprivileged and has no way out of the appliance but this. The
 * destination is the `url` of the plugin's own settings (what an administrator configured, never what the plugin
 * sends); the body is signed like /notify/webhooks (X-Bulwark-Signature, HMAC-SHA256 with the sealed `secret`) and
 * sent through the outbound guard — a special address only when it is on /settings/outbound, plain http only to
 * such an address — with the notifier's retries. The outcome goes to the plugin's log.
 */
export class PluginDeliveries {
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly context: AppContext,
    private readonly log: (name: string, line: string) => void,
  ) {}

  /** Why a `url` setting cannot be posted to (400 text naming the field), or null. */
  settingsProblem(settings: Record<string, unknown>): string | null {
    if (typeof settings.url !== 'string') return null;
    const url = new URL(settings.url);
    if (url.username || url.password) return 'body.settings.url must not carry credentials (use secret for the signature)';
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const refused = adminDestinationProblem(host, this.context.store);
    if (refused) return `body.settings.url: ${refused}`;
    if (url.protocol === 'http:' && !this.httpAllowed(host)) {
      return `body.settings.url: plain http only to an address an administrator named in ${ADMIN_ALLOW_LIST_PATH} (allowed_addresses); use https`;
    }
    return null;
  }

  /** Starts the delivery (202): answers its id; retries run in the background. */
  post(plugin: string, settings: Record<string, unknown>, event: PluginEvent): { delivery: string } {
    if (typeof settings.url !== 'string') throw conflict(`plugin ${plugin} has no url setting to post to`);
    const problem = this.settingsProblem(settings);
    if (problem) throw conflict(`plugin ${plugin} cannot post: ${problem}`);
    const sealed = typeof settings.secret === 'string' ? settings.secret : '';
    const secret = Sealer.isSealed(sealed) ? this.context.sealer.open(sealed) : '';
    const delivery = randomUUID();
    const body = JSON.stringify({ event: event.topic, hook: event.hook, at: event.at, plugin, appliance: hostname(), payload: event.payload });
    const target = { url: settings.url, secret, allowed_addresses: adminAllowList(this.context.store) };
    const run = postWithRetries(target, body, { 'x-bulwark-event': event.topic, 'x-bulwark-delivery': delivery }, () => this.stopped).then((failure) => {
      this.log(plugin, failure === null ? `delivered ${event.topic} (${delivery})` : `not delivered ${event.topic} (${delivery}): ${failure}`);
    });
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
    return { delivery };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.running]);
  }

  private httpAllowed(host: string): boolean {
    const family = isIP(host);
    return family !== 0 && allowListOf(adminAllowList(this.context.store)).check(host, family === 6 ? 'ipv6' : 'ipv4');
  }
}

/**
 * Kea's DHCP-DDNS server (kea-dhcp-ddns) next to kea-dhcp4: rendered from /dhcp/ddns, checked with
 * `kea-dhcp-ddns -t`, and run while DHCP and dynamic DNS are both on; stopped otherwise.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AppContext } from '../../context.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { renderKeaDdns } from '../../render/kea/kea-ddns.js';
import type { CheckResult } from '../../platform/daemons.js';
import { daemonRuntime, prepareDaemonRuntime, writeDaemonFile } from '../../platform/daemon-runtime.js';
import { renderOr409 } from '../common/checker-refusal.js';
import { DaemonRecord } from '../common/daemon-record.js';
import { installAndRun, requirePassedCheck, stopDaemon } from '../common/daemon-install.js';

const LABEL = 'Kea DHCP-DDNS';
const FILE = 'kea-dhcp-ddns.conf';

export class DdnsService {
  readonly record: DaemonRecord;

  constructor(
    private readonly context: AppContext,
    private readonly ddns: SingletonModel,
    private readonly logLevel: () => string,
  ) {
    this.record = new DaemonRecord(context, 'kea-dhcp-ddns');
  }

  enabled(): boolean {
    return Boolean(this.ddns.read().enabled);
  }

  private runtime() {
    return daemonRuntime(this.context.config, 'kea-dhcp-ddns', this.context.platform.simulated);
  }

  private render(name: string): { file: string; text: string } {
    const runtime = this.runtime();
    prepareDaemonRuntime(runtime);
    const stored = this.ddns.read();
    const text = renderOr409('Kea', () => renderKeaDdns({
      forward_zone: String(stored.forward_zone ?? ''),
      reverse_zone_v4: String(stored.reverse_zone_v4 ?? ''),
      dns_server: String(stored.dns_server ?? ''),
      tsig_key: String(stored.tsig_key ?? ''),
      tsig_algorithm: String(stored.tsig_algorithm ?? ''),
      tsig_secret: this.ddns.secret('tsig_secret') ?? '',
      log_level: this.logLevel(),
      paths: { controlSocket: join(runtime.stateDir, 'kea-ddns-ctrl.sock') },
    }));
    return { file: writeDaemonFile(runtime, [name], text), text };
  }

  /** Renders and runs the checker without installing anything. */
  async check(): Promise<{ check: CheckResult; text: string }> {
    const candidate = this.render(`${FILE}.check`);
    try {
      return { check: await this.context.platform.daemons.check('kea-dhcp-ddns', candidate.file), text: candidate.text };
    } finally {
      rmSync(candidate.file, { force: true });
    }
  }

  /** The checked configuration text: 503 when kea-dhcp-ddns is not installed, 409 when it refuses the file. */
  private async checkedText(): Promise<string> {
    const candidate = this.render(`${FILE}.new`);
    const check = await this.context.platform.daemons.check('kea-dhcp-ddns', candidate.file);
    rmSync(candidate.file, { force: true });
    requirePassedCheck(this.context, this.record, LABEL, check, candidate.text);
    return candidate.text;
  }

  /** Renders, checks and (re)starts kea-dhcp-ddns (409 and the previous file back when it does not come up). */
  async apply(): Promise<void> {
    const text = await this.checkedText();
    await installAndRun(this.context, this.record, { label: LABEL, runtime: this.runtime(), fileName: FILE, text, mode: 'restart' });
  }

  /** Renders, checks and installs the file without running it (DHCP is off), and stops the server. */
  async save(): Promise<void> {
    writeDaemonFile(this.runtime(), [FILE], await this.checkedText());
    await this.stop();
  }

  /** Stops kea-dhcp-ddns when it runs. */
  async stop(): Promise<void> {
    if ((await this.context.platform.daemons.status('kea-dhcp-ddns')).running) await stopDaemon(this.context, this.record);
  }
}

import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, openSync, closeSync, readdirSync, rmSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { EVENT_TOPICS } from '../../core/events.js';
import type { AppContext } from '../../context.js';
import { badRequest, conflict, HttpError, notFound } from '../../core/errors.js';
import { BUILD } from '../../core/build-info.js';
import { isoTime } from '../../core/clock.js';
import { outboundFetch } from '../../net/outbound.js';
import type { ServiceState } from '../common/service-state.js';
import { applianceDir, lastActivation, snapshotsDir, takeOutcome, writeJsonAtomically } from './activation-files.js';
import type { ActivationPlan } from './activation-helper.js';
import { InstallLayout, RELEASE_VERSION } from './install-layout.js';
import { verifyRelease } from './release-signature.js';
import { describeManager, detectServiceManager, type ServiceManager } from './service-manager.js';

export const DEFAULT_RELEASE_URL = 'https://api.github.com/repos/bulwark-appliance/bulwark/releases/latest';
const REBOOT_MARKER = '[reboot-recommended]';
const MAX_TARBALL = 500 * 1024 * 1024;

/** Hub topic of every finished activation (install, rollback, restart): payload = the recorded outcome. */
export const APPLIANCE_ACTIVATION_TOPIC = 'updates.appliance.activation';
const KEPT_SNAPSHOTS = 3;

interface ApplianceState {
  /** The key id that signed each installed release. */
  signers: Record<string, string>;
  /** The release `current` named before the last switch: the default target of a rollback. */
  previous: string | null;
  latest: null | { version: string; notes: string; published_at: string; tarball_url: string | null; checksum_url: string | null; signature_url?: string | null };
}

/** Compares dotted versions numerically (`v1.10.0` > `1.9.2`); pre-release suffixes sort before the release. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => v.replace(/^v/, '').split(/[-+]/)[0].split('.').map((n) => Number(n) || 0);
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  const preA = a.includes('-') ? 1 : 0;
  const preB = b.includes('-') ? 1 : 0;
  return preB - preA;
}

/** The hex digest in a checksum file: `hex  name`, `SHA256 (name) = hex`, or bare hex. */
export function checksumOf(text: string): string | null {
  const match = /SHA256 \([^)]*\) = ([0-9a-fA-F]{64})/.exec(text) ?? /^([0-9a-fA-F]{64})\b/m.exec(text.trim());
  return match ? match[1].toLowerCase() : null;
}

/**
 * The appliance's own release (docs/updates.md): check a code-hosting "latest release"; verify a release's
 * Ed25519 signature against the trusted keys before anything is unpacked; unpack it beside the running release,
 * snapshot the database, switch `current` in one rename and restart through the service manager, with the
 * activation helper rolling back automatically when the new release does not answer ready in time.
 */
export class ApplianceUpdates {
  readonly layout: InstallLayout;
  private readonly outcomeTimer: NodeJS.Timeout;
  private switching = false;

  constructor(
    private readonly context: AppContext,
    private readonly state: ServiceState,
    private readonly history: (action: string, details: string, status: string) => void,
  ) {
    this.layout = new InstallLayout(context.config.installRoot);
    // The helper's verdict arrives after the restart: taken by the release it left serving, once.
    this.collectOutcome();
    this.outcomeTimer = setInterval(() => this.collectOutcome(), 1000);
    this.outcomeTimer.unref();
  }

  stop(): void {
    clearInterval(this.outcomeTimer);
  }

  private collectOutcome(): void {
    const outcome = takeOutcome(this.context.config.dataDir, BUILD.version);
    if (!outcome) return;
    const timings = Object.entries(outcome.timings_ms).map(([name, ms]) => `${name} ${ms} ms`).join(', ');
    this.history(`appliance_${outcome.mode}`, `${outcome.reason} (${timings})`, outcome.outcome);
    this.context.events.emit(APPLIANCE_ACTIVATION_TOPIC, { ...outcome });
  }

  private read(): ApplianceState {
    return this.state.get<ApplianceState>('appliance', { signers: {}, previous: null, latest: null });
  }

  private save(next: ApplianceState): void {
    this.state.set('appliance', next);
  }

  private source() {
    const section = this.context.store.getSingleton('settings.appliance_updates') ?? {};
    return {
      url: String(section.release_url || DEFAULT_RELEASE_URL),
      allowList: String(section.allow_private ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      allowHttp: section.allow_http === 'true',
    };
  }

  /** The release a rollback returns to by default: the one before the last switch, else the newest other kept one. */
  private backupVersion(current: string | null, releases: string[]): string | null {
    const previous = this.read().previous;
    if (previous && previous !== current && releases.includes(previous)) return previous;
    return [...releases].reverse().find((version) => version !== current) ?? null;
  }

  info() {
    const state = this.read();
    const latest = state.latest;
    const notes = latest?.notes ?? '';
    const reboot = notes.includes(REBOOT_MARKER);
    const installed = this.layout.currentVersion();
    const current = installed ?? BUILD.version;
    const releases = this.layout.releases();
    const backup = installed ? this.backupVersion(installed, releases) : null;
    return {
      current_version: current,
      latest_version: latest?.version ?? '',
      update_available: latest ? compareVersions(latest.version, current) > 0 : false,
      release_notes: notes,
      published_at: latest?.published_at ?? '',
      tarball_url: latest?.tarball_url ?? null,
      checksum_url: latest?.checksum_url ?? null,
      signature_url: latest?.signature_url ?? null,
      has_backup: backup !== null,
      backup_version: backup,
      restart_pending: current !== BUILD.version,
      running_version: BUILD.version,
      reboot_recommended: reboot,
      reboot_reason: reboot ? 'the release notes recommend a reboot' : null,
      release_url: this.source().url,
      signer_key_id: state.signers[current] ?? null,
      install_root: this.layout.root,
      installed: installed !== null,
      releases,
      service_manager: describeManager(detectServiceManager(this.layout)),
      last_activation: lastActivation(this.context.config.dataDir),
    };
  }

  private async fetchBytes(url: string, limit: number): Promise<Buffer> {
    const { allowList, allowHttp } = this.source();
    const response = await outboundFetch(url, { headers: { accept: 'application/octet-stream, application/json' } }, { allowList, allowHttp, timeoutMs: 120_000, maxBytes: limit });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new HttpError(502, `${url} answered HTTP ${response.status}`);
    }
    return Buffer.from(await response.arrayBuffer());
  }

  async check() {
    const { url } = this.source();
    try {
      const release = JSON.parse((await this.fetchBytes(url, 5 * 1024 * 1024)).toString('utf8')) as {
        tag_name?: string; body?: string; published_at?: string; assets?: { name: string; browser_download_url: string }[];
      };
      if (!release.tag_name) throw new HttpError(502, 'the release feed has no tag_name');
      const assets = release.assets ?? [];
      const tarball = assets.find((a) => /\.tar\.(gz|xz)$/.test(a.name));
      const checksum = assets.find((a) => /sha256/i.test(a.name));
      const signature = assets.find((a) => /\.tar\.(gz|xz)\.sig$/.test(a.name));
      const state = this.read();
      state.latest = {
        version: release.tag_name.replace(/^v/, ''),
        notes: release.body ?? '',
        published_at: release.published_at ?? '',
        tarball_url: tarball?.browser_download_url ?? null,
        checksum_url: checksum?.browser_download_url ?? null,
        signature_url: signature?.browser_download_url ?? null,
      };
      this.save(state);
      this.history('appliance_check', `latest ${state.latest.version}`, 'ok');
      const info = this.info();
      if (info.update_available) this.context.events.emit(EVENT_TOPICS.updateAvailable, { current: info.current_version, latest: info.latest_version, published_at: info.published_at });
      return info;
    } catch (error) {
      this.history('appliance_check', (error as Error).message, 'error');
      throw error instanceof HttpError ? error : new HttpError(502, `release check failed: ${(error as Error).message}`);
    }
  }

    /**
   * Verify → unpack beside the running release → snapshot the database → switch `current` → restart through the
   * activation helper. Verification and the checks that need nothing changed come first: a refusal leaves the
   * releases, `current` and the database as they were.
   */
  private async activateArchive(archive: Buffer, signatureText: string | null | undefined, expectedVersion: string | null) {
    const started = performance.now();
    const { keyId } = verifyRelease(archive, signatureText, this.layout.trustedKeysDir);
    const verified = performance.now();
    const previous = this.requireInstalled();
    const manager = this.requireManager();
    if (this.switching) throw conflict('another release switch is in progress');
    this.switching = true;
    try {
      const version = await this.layout.unpack(archive, expectedVersion);
      const unpacked = performance.now();
      let snapshot: string;
      let snapshotted: number;
      try {
        snapshot = await this.snapshotDatabase(version);
        snapshotted = performance.now();
        this.layout.switchTo(version);
      } catch (error) {
        // Not switched: the unpacked release goes again, so a failure leaves the releases as they were.
        rmSync(join(this.layout.releasesDir, version), { recursive: true, force: true });
        throw error;
      }
      const switched = performance.now();
      const state = this.read();
      this.save({ ...state, signers: { ...state.signers, [version]: keyId }, previous });
      const timings = { verify: Math.round(verified - started), unpack: Math.round(unpacked - verified), snapshot: Math.round(snapshotted - unpacked), switch: Math.round(switched - snapshotted) };
      this.startHelper({ mode: 'install', target: version, previous, manager, snapshot, keyId, timings }, () => this.layout.switchTo(previous));
      return { version, keyId, previous };
    } finally {
      this.switching = false;
    }
  }

  private requireInstalled(): string {
    const current = this.layout.currentVersion();
    if (!current) throw conflict(`Bulwark is not installed under ${this.layout.root} (no ${this.layout.currentLink}): install it with install/bulwark-install.sh (docs/appliance.md)`);
    return current;
  }

  private requireManager(): ServiceManager {
    const manager = detectServiceManager(this.layout);
    if (!manager) throw conflict('nothing can restart Bulwark here: it runs neither under systemd (bulwark.service) nor under install/bulwark-supervise.sh (docs/appliance.md)');
    return manager;
  }

  /** better-sqlite3's online backup of the live database; the newest few are kept. */
  private async snapshotDatabase(version: string): Promise<string> {
    const dir = snapshotsDir(this.context.config.dataDir);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const path = join(dir, `before-${version}-${Date.now()}.db`);
    await this.context.db.backup(path);
    const kept = readdirSync(dir).filter((name) => name.endsWith('.db')).sort((a, b) => Number(/-(\d+)\.db$/.exec(b)?.[1]) - Number(/-(\d+)\.db$/.exec(a)?.[1]));
    for (const old of kept.slice(KEPT_SNAPSHOTS)) rmSync(join(dir, old), { force: true });
    return path;
  }

  /** Starts the detached activation helper (it outlives this process, which it restarts). */
  private startHelper(plan: Pick<ActivationPlan, 'mode' | 'target' | 'previous' | 'manager' | 'snapshot' | 'keyId' | 'timings'>, undo: () => void): void {
    const { config } = this.context;
    const full: ActivationPlan = { ...plan, installRoot: this.layout.root, dataDir: config.dataDir, host: config.host, port: config.port, readySeconds: config.updateReadySeconds, keepReleases: config.keepReleases, startedAt: isoTime(this.context.clock.now()) };
    const dir = applianceDir(config.dataDir);
    const planPath = join(dir, `plan-${randomBytes(6).toString('hex')}.json`);
    const self = fileURLToPath(import.meta.url);
    // Built: dist/areas/updates/activation-helper.js; from source (tsx): the .ts beside this file.
    const helper = join(self, '..', `activation-helper${extname(self)}`);
    try {
      writeJsonAtomically(planPath, full);
      const log = openSync(join(dir, 'activation-helper.log'), 'a', 0o600);
      const child = spawn(process.execPath, [...(extname(self) === '.ts' ? ['--import', 'tsx'] : []), helper, planPath], { detached: true, stdio: ['ignore', log, log] });
      closeSync(log);
      child.unref();
    } catch (error) {
      rmSync(planPath, { force: true });
      undo();
      throw error;
    }
  }

  async install() {
    let info = this.info();
    if (!info.latest_version) info = await this.check();
    if (!info.update_available) return { message: 'Already running the latest version', restart_required: false, reboot_recommended: false, reboot_reason: null };
    if (!info.tarball_url) throw new HttpError(502, 'the latest release has no tarball asset');
    if (!RELEASE_VERSION.test(info.latest_version)) throw badRequest('the release version must be letters, digits, . + and -');
    try {
      const tarball = await this.fetchBytes(info.tarball_url, MAX_TARBALL);
      const signature = info.signature_url ? (await this.fetchBytes(info.signature_url, 64 * 1024)).toString('utf8') : null;
      const { version, keyId, previous } = await this.activateArchive(tarball, signature, info.latest_version);
      this.history('appliance_install', `${version} verified (key ${keyId}), unpacked and switched from ${previous}; restarting`, 'started');
      return this.startedAnswer(version, keyId, previous, info.reboot_recommended, info.reboot_reason);
    } catch (error) {
      this.history('appliance_install', (error as Error).message, 'refused');
      throw error;
    }
  }

  private startedAnswer(version: string, keyId: string, previous: string, reboot: boolean, rebootReason: string | null) {
    return {
      message: `Installed ${version} (signed by key ${keyId}); restarting: it must answer ready within ${this.context.config.updateReadySeconds} s, or ${previous} and its database are restored`,
      restart_required: false,
      reboot_recommended: reboot,
      reboot_reason: rebootReason,
    };
  }

  async installLocal(body: { filename: string; content_base64: string; sha256?: string; signature?: string }) {
    const version = /^bulwark-(.+)\.tar\.(gz|xz)$/.exec(body.filename)![1];
    const tarball = Buffer.from(body.content_base64, 'base64');
    try {
      if (tarball.length === 0 || tarball.length > MAX_TARBALL) throw badRequest('body.content_base64 must hold a tarball of at most 500 MB');
      if (body.sha256 !== undefined) {
        const expected = checksumOf(body.sha256);
        const digest = createHash('sha256').update(tarball).digest('hex');
        if (!expected) throw badRequest('body.sha256 is not a SHA-256 checksum line');
        if (expected !== digest) throw badRequest(`checksum mismatch: expected ${expected}, the tarball has ${digest}`);
      }
      const activated = await this.activateArchive(tarball, body.signature, version);
      this.history('install_local', `${activated.version} verified (key ${activated.keyId}), unpacked and switched from ${activated.previous}; restarting`, 'started');
      return { ...this.startedAnswer(activated.version, activated.keyId, activated.previous, false, null), signer_key_id: activated.keyId };
    } catch (error) {
      this.history('install_local', (error as Error).message, 'refused');
      throw error;
    }
  }

  /** Back to any kept release (default: the one before the last switch), through the same switch and restart. */
  rollback(body: { version?: string } = {}) {
    const current = this.requireInstalled();
    const releases = this.layout.releases();
    const target = body.version ?? this.backupVersion(current, releases);
    if (!target) throw conflict('no other kept release to roll back to');
    if (!releases.includes(target)) throw notFound(`release ${target} is not kept in ${this.layout.releasesDir} (kept: ${releases.join(', ')})`);
    if (target === current) throw conflict(`release ${target} is the current one`);
    const manager = this.requireManager();
    if (this.switching) throw conflict('another release switch is in progress');
    const started = performance.now();
    this.layout.switchTo(target);
    this.save({ ...this.read(), previous: current });
    this.startHelper({ mode: 'rollback', target, previous: current, manager, snapshot: null, keyId: this.read().signers[target] ?? null, timings: { switch: Math.round(performance.now() - started) } }, () => this.layout.switchTo(current));
    this.history('appliance_rollback', `switched from ${current} to ${target}; restarting`, 'started');
    return { message: `Rolling back to ${target}; restarting: it must answer ready within ${this.context.config.updateReadySeconds} s, or ${current} is restored`, restart_required: false, reboot_recommended: false, reboot_reason: null };
  }

  /** Restarts Bulwark through its service manager (the helper waits for it to answer ready and records it). */
  restart() {
    const current = this.requireInstalled();
    const manager = this.requireManager();
    this.startHelper({ mode: 'restart', target: current, previous: null, manager, snapshot: null, keyId: this.read().signers[current] ?? null, timings: {} }, () => undefined);
    this.history('appliance_restart', `restarting ${current} through ${describeManager(manager)}`, 'started');
    return { message: `Restarting ${current} through ${describeManager(manager)}` };
  }
}

import { createHash } from 'node:crypto';
import { EVENT_TOPICS } from '../../core/events.js';
import { existsSync } from 'node:fs';
import type { AppContext } from '../../context.js';
import { badRequest, conflict, HttpError } from '../../core/errors.js';
import { BUILD } from '../../core/build-info.js';
import { outboundFetch } from '../../net/outbound.js';
import { dataPath, writeDataFile } from '../common/data-files.js';
import type { ServiceState } from '../common/service-state.js';

export const DEFAULT_RELEASE_URL = 'https://api.github.com/repos/bulwark-appliance/bulwark/releases/latest';
const REBOOT_MARKER = '[reboot-recommended]';
const MAX_TARBALL = 500 * 1024 * 1024;

interface ApplianceState {
  current_version: string;
  running_version: string;
  backup_version: string | null;
  latest: null | { version: string; notes: string; published_at: string; tarball_url: string | null; checksum_url: string | null };
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

/** The appliance's own release: check a code-hosting "latest release", stage and verify tarballs, roll back. */
export class ApplianceUpdates {
  constructor(
    private readonly context: AppContext,
    private readonly state: ServiceState,
    private readonly history: (action: string, details: string, status: string) => void,
  ) {}

  private read(): ApplianceState {
    return this.state.get<ApplianceState>('appliance', { current_version: BUILD.version, running_version: BUILD.version, backup_version: null, latest: null });
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

  info() {
    const state = this.read();
    const latest = state.latest;
    const notes = latest?.notes ?? '';
    const reboot = notes.includes(REBOOT_MARKER);
    return {
      current_version: state.current_version,
      latest_version: latest?.version ?? '',
      update_available: latest ? compareVersions(latest.version, state.current_version) > 0 : false,
      release_notes: notes,
      published_at: latest?.published_at ?? '',
      tarball_url: latest?.tarball_url ?? null,
      checksum_url: latest?.checksum_url ?? null,
      has_backup: state.backup_version !== null && existsSync(this.releaseFile(state.backup_version)),
      backup_version: state.backup_version,
      restart_pending: state.current_version !== state.running_version,
      running_version: state.running_version,
      reboot_recommended: reboot,
      reboot_reason: reboot ? 'the release notes recommend a reboot' : null,
      release_url: this.source().url,
    };
  }

  private releaseFile(version: string): string {
    return dataPath(this.context.config.dataDir, 'appliance', 'releases', `bulwark-${version.replace(/[^0-9A-Za-z.+-]/g, '')}.tar`);
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
      const state = this.read();
      state.latest = {
        version: release.tag_name.replace(/^v/, ''),
        notes: release.body ?? '',
        published_at: release.published_at ?? '',
        tarball_url: tarball?.browser_download_url ?? null,
        checksum_url: checksum?.browser_download_url ?? null,
      };
      this.save(state);
      this.history('appliance_check', `latest ${state.latest.version}`, 'ok');
      if (compareVersions(state.latest.version, state.current_version) > 0) {
        this.context.events.emit(EVENT_TOPICS.updateAvailable, { current: state.current_version, latest: state.latest.version, published_at: state.latest.published_at });
      }
      return this.info();
    } catch (error) {
      this.history('appliance_check', (error as Error).message, 'error');
      throw error instanceof HttpError ? error : new HttpError(502, `release check failed: ${(error as Error).message}`);
    }
  }

  /** Verifies a tarball against a checksum and stages it as the current version; the previous one is kept for rollback. */
  private stage(version: string, tarball: Buffer, checksumText: string | null): void {
    // The version names the staged file; a feed's tag such as `../../x` must not pick another path.
    if (!/^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$/.test(version)) throw badRequest('the release version must be letters, digits, . + and -');
    const digest = createHash('sha256').update(tarball).digest('hex');
    if (checksumText !== null) {
      const expected = checksumOf(checksumText);
      if (!expected) throw badRequest('the checksum is not a SHA-256 checksum line');
      if (expected !== digest) throw badRequest(`checksum mismatch: expected ${expected}, the tarball has ${digest}`);
    }
    const gzip = tarball[0] === 0x1f && tarball[1] === 0x8b;
    const xz = tarball.subarray(0, 6).equals(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]));
    if (!gzip && !xz) throw badRequest('the tarball is neither gzip nor xz compressed');
    writeDataFile(this.context.config.dataDir, ['appliance', 'releases', `bulwark-${version}.tar`], tarball, 0o600);
    const state = this.read();
    this.save({ ...state, backup_version: state.current_version === version ? state.backup_version : state.current_version, current_version: version });
  }

  async install() {
    let info = this.info();
    if (!info.latest_version) info = await this.check();
    if (!info.update_available) return { message: 'Already running the latest version', restart_required: false, reboot_recommended: false, reboot_reason: null };
    if (!info.tarball_url) throw new HttpError(502, 'the latest release has no tarball asset');
    try {
      const tarball = await this.fetchBytes(info.tarball_url, MAX_TARBALL);
      const checksum = info.checksum_url ? (await this.fetchBytes(info.checksum_url, 64 * 1024)).toString('utf8') : null;
      if (checksum === null) throw new HttpError(502, 'the latest release has no SHA-256 checksum asset: refusing to install an unverified tarball');
      this.stage(info.latest_version, tarball, checksum);
    } catch (error) {
      this.history('appliance_install', (error as Error).message, 'failed');
      throw error;
    }
    this.history('appliance_install', `installed ${info.latest_version}`, 'completed');
    return { message: `Installed ${info.latest_version}; restart services to activate it`, restart_required: true, reboot_recommended: info.reboot_recommended, reboot_reason: info.reboot_reason };
  }

  installLocal(body: { filename: string; content_base64: string; sha256?: string; restart?: boolean }) {
    const version = /^bulwark-(.+)\.tar\.(gz|xz)$/.exec(body.filename)![1];
    const tarball = Buffer.from(body.content_base64, 'base64');
    if (tarball.length === 0 || tarball.length > MAX_TARBALL) throw badRequest('body.content_base64 must hold a tarball of at most 500 MB');
    try {
      this.stage(version, tarball, body.sha256 ?? null);
    } catch (error) {
      this.history('install_local', (error as Error).message, 'failed');
      throw error;
    }
    this.history('install_local', `installed ${version}${body.sha256 ? ' (checksum verified)' : ' (no checksum given)'}`, 'completed');
    if (body.restart) this.restart();
    return { message: `installed ${version}` };
  }

  rollback() {
    const state = this.read();
    if (!state.backup_version || !existsSync(this.releaseFile(state.backup_version))) throw conflict('no previous version to roll back to');
    this.save({ ...state, current_version: state.backup_version, backup_version: state.current_version });
    this.history('appliance_rollback', `rolled back to ${state.backup_version}`, 'ok');
    return { message: `Rolled back to ${state.backup_version}; restart services to activate it`, restart_required: true, reboot_recommended: false, reboot_reason: null };
  }

  /** On the simulated platform the restart is recorded and the staged version becomes the running one. */
  restart() {
    const state = this.read();
    this.history('appliance_restart', `restart to activate ${state.current_version}`, 'started');
    if (this.context.platform.simulated) this.save({ ...state, running_version: state.current_version });
    return {
      message: this.context.platform.simulated
        ? 'Services restarting... (simulated: recorded only)'
        : 'Restart recorded; activating a staged release is left to the service manager on this platform',
    };
  }
}

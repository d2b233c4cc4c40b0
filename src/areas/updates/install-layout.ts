import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { badRequest, conflict } from '../../core/errors.js';
import { runCommand } from '../../platform/exec.js';

/** A release version as a directory name: the installer's rule (install/bulwark-install.sh). */
export const RELEASE_VERSION = /^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$/;

/**
 * The appliance as install/bulwark-install.sh lays it out under an install root (docs/appliance.md):
 * /opt/bulwark/releases/<version>, /opt/bulwark/current -> releases/<version>, /etc/bulwark/trusted-keys/.
 */
export class InstallLayout {
  readonly prefix: string;
  readonly releasesDir: string;
  readonly currentLink: string;
  readonly trustedKeysDir: string;
  readonly runDir: string;

  constructor(readonly root: string) {
    this.prefix = join(root, 'opt/bulwark');
    this.releasesDir = join(this.prefix, 'releases');
    this.currentLink = join(this.prefix, 'current');
    this.trustedKeysDir = join(root, 'etc/bulwark/trusted-keys');
    this.runDir = join(root, 'run/bulwark');
  }

  /** The version `current` names, or null where Bulwark was not installed by the installer (a development tree). */
  currentVersion(): string | null {
    try {
      const target = readlinkSync(this.currentLink);
      return RELEASE_VERSION.test(basename(target)) ? basename(target) : null;
    } catch {
      return null;
    }
  }

  /** The kept releases (directories under releases/ with a dist/main.js), oldest first by install time. */
  releases(): string[] {
    let names: string[] = [];
    try {
      names = readdirSync(this.releasesDir).filter((name) => RELEASE_VERSION.test(name) && existsSync(join(this.releasesDir, name, 'dist/main.js')));
    } catch {
      return [];
    }
    return names.sort((a, b) => statSync(join(this.releasesDir, a)).mtimeMs - statSync(join(this.releasesDir, b)).mtimeMs);
  }

  /**
   * Removes the oldest kept releases so that `keep` remain: the release `current` names and every one in `protect`
   * (the rollback target) always stay, the rest are kept newest first by install time. Answers what was removed.
   */
  prune(keep: number, protect: readonly (string | null)[]): string[] {
    const kept = new Set<string>([this.currentVersion(), ...protect].filter((name): name is string => name !== null));
    const removed: string[] = [];
    for (const name of this.releases().reverse()) {
      if (kept.has(name)) continue;
      if (kept.size < keep) kept.add(name);
      else removed.push(name);
    }
    for (const name of removed) rmSync(join(this.releasesDir, name), { recursive: true, force: true });
    return removed.reverse();
  }

  /**
   * Unpacks a (verified) archive beside the running release: into a hidden directory first, checked (a
   * package.json with a usable version and dist/main.js), then renamed to releases/<version>. The running
   * release is never touched; a failed unpack leaves nothing behind.
   */
  async unpack(archive: Buffer, expectedVersion: string | null = null): Promise<string> {
    mkdirSync(this.releasesDir, { recursive: true, mode: 0o755 });
    const token = randomBytes(6).toString('hex');
    const incoming = join(this.releasesDir, `.incoming-${token}`);
    const file = join(this.releasesDir, `.incoming-${token}.tar`);
    mkdirSync(incoming, { mode: 0o755 });
    try {
      writeFileSync(file, archive, { mode: 0o600 });
      // GNU tar detects gzip/xz itself, refuses members with `..` and absolute names, and creates symbolic links
      // last so no member is written through one. Ownership is not taken from the archive.
      const untar = await runCommand('tar', ['-x', '--no-same-owner', '-f', file, '-C', incoming], { timeoutMs: 600_000 });
      if (untar.code !== 0) throw badRequest(`the release archive could not be unpacked: ${untar.stderr.trim().split('\n')[0].slice(0, 200)}`);
      let version: unknown;
      try {
        version = (JSON.parse(readFileSync(join(incoming, 'package.json'), 'utf8')) as { version?: unknown }).version;
      } catch {
        throw badRequest('the release archive has no package.json at its top');
      }
      if (typeof version !== 'string' || !RELEASE_VERSION.test(version)) throw badRequest('the release version in package.json must be letters, digits, . + and -');
      if (expectedVersion !== null && version !== expectedVersion) throw badRequest(`the archive holds release ${version}, not ${expectedVersion} as its name says`);
      if (!existsSync(join(incoming, 'dist/main.js'))) throw badRequest('the release archive has no dist/main.js');
      if (version === this.currentVersion()) throw conflict(`release ${version} is the one running; nothing to install`);
      const target = join(this.releasesDir, version);
      rmSync(target, { recursive: true, force: true });
      renameSync(incoming, target);
      return version;
    } finally {
      rmSync(file, { force: true });
      rmSync(incoming, { recursive: true, force: true });
    }
  }

  /** Points `current` at a kept release in one rename (a new link under a temporary name, renamed over it). */
  switchTo(version: string): void {
    if (!RELEASE_VERSION.test(version) || !existsSync(join(this.releasesDir, version, 'dist/main.js'))) throw conflict(`release ${version} is not kept in ${this.releasesDir}`);
    const temporary = join(this.prefix, `.current-${randomBytes(6).toString('hex')}`);
    symlinkSync(`releases/${version}`, temporary);
    try {
      renameSync(temporary, this.currentLink);
    } catch (error) {
      rmSync(temporary, { force: true });
      throw error;
    }
  }
}

import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AppContext } from '../../context.js';
import type { ConfigObject } from '../../store/config-store.js';
import type { IpsecFiles } from '../../platform/ipsec.js';
import { renderStrongswanConf, renderSwanctl, type SwanctlConnection } from '../../render/strongswan/swanctl.js';
import type { CaService } from '../ca/service.js';
import { DEFAULT_AH_PROPOSALS, DEFAULT_ESP_PROPOSALS, DEFAULT_IKE_PROPOSALS } from './schema.js';
import type { VpnService } from './service.js';
import { missingCredentials } from './ipsec-model.js';
import { notKept, revertWrites } from '../../model/revert-writes.js';
import { runtimeRoot } from '../../platform/daemon-runtime.js';
import { prepareRuntimeRoot } from '../../platform/runtime-access.js';

/** Plugins of the appliance's charon: crypto (openssl for the local CA's ECDSA keys), credentials, VICI; the platform adds its kernel interface. */
const PLUGINS = ['random', 'nonce', 'openssl', 'aes', 'sha1', 'sha2', 'hmac', 'gmp', 'pem', 'pkcs1', 'pkcs8', 'x509', 'revocation', 'constraints', 'pubkey', 'kdf', 'socket-default', 'vici'];

/** The connection (and child) name of an SA in swanctl.conf: Bulwark's own, never the SA's display name. */
export const connectionName = (id: string) => `bulwark-${id.toLowerCase()}`;

/** A credential file swanctl loads, relative to its directory. */
interface CredentialFile {
  sub: 'x509' | 'x509ca' | 'private';
  name: string;
  content: string;
}

const str = (value: unknown) => (typeof value === 'string' ? value : null);

/**
 * The IPsec SAs' life on the platform: every change of an SA renders swanctl.conf (and the certificates it
 * names) into the charon runtime directory and loads it into the appliance's charon; no SA left stops charon.
 * Live SA state comes from `swanctl --list-sas`. One load at a time.
 */
export class IpsecRuntime {
  private serial: Promise<unknown> = Promise.resolve();
  private lastLoadError: string | null = null;

  constructor(
    private readonly context: AppContext,
    private readonly vpn: VpnService,
    private readonly ca?: CaService,
  ) {
    // SAs are applied as they are written: boot() loads them into charon (adopted when an earlier API left it running).
    context.restore.register({
      name: 'ipsec',
      daemon: context.platform.ipsec.daemon,
      enabled: () => !context.platform.simulated && vpn.ipsec.objects().some((sa) => missingCredentials(sa.data) === null),
      running: async () => (await context.platform.ipsec.status()).running,
      appliedVersion: () => context.apply.versions.activeIfCurrent()?.version ?? null,
    });
    context.models.onChanged([vpn.ipsec], (change) => this.one(async () => {
      try {
        await this.apply();
      } catch (error) {
        if (change.cause !== 'write') throw error;
        // The previous configuration stays in force: the stored SAs and the rendered files go back to it.
        revertWrites(context.store, change.objects);
        await this.apply().catch((again: Error) => context.log.error({ err: again.message }, 'IPsec configuration could not be put back'));
        throw notKept(error);
      }
    }));
  }

  private one<T>(work: () => Promise<T>): Promise<T> {
    const run = this.serial.then(work);
    this.serial = run.catch(() => undefined);
    return run;
  }

  /** `<runtime root>/charon` (root only: it holds keys and pre-shared keys); the data directory when simulated. */
  private files(): IpsecFiles & { dir: string } {
    const { config } = this.context;
    const dir = this.context.platform.simulated ? join(resolve(config.dataDir), 'ipsec') : join(runtimeRoot(config), 'charon');
    return {
      dir,
      strongswanConf: join(dir, 'strongswan.conf'),
      swanctlDir: join(dir, 'swanctl'),
      viciSocket: join(dir, 'state', 'charon.vici'),
      pidFile: join(dir, 'state', 'charon.pid'),
    };
  }

  private connection(sa: ConfigObject, encap: boolean, credentials: CredentialFile[]): SwanctlConnection {
    const data = sa.data;
    const protocol = String(data.protocol);
    const cert = data.auth_method === 'cert' ? this.certificateFiles(String(data.certificate_id), credentials) : null;
    const address = (value: unknown) => (value === 'any' ? '%any' : String(value));
    return {
      name: connectionName(sa.id),
      field: `ipsec SA ${sa.id}`,
      localAddrs: address(data.local_addr),
      remoteAddrs: address(data.remote_addr),
      localId: str(data.local_id),
      remoteId: str(data.remote_id),
      auth: data.auth_method === 'cert' ? 'pubkey' : 'psk',
      certFile: cert?.certFile ?? null,
      caFile: cert?.caFile ?? null,
      ikeProposals: String(data.ike_proposals ?? DEFAULT_IKE_PROPOSALS),
      espProposals: protocol === 'ah' ? null : String(data.esp_proposals ?? DEFAULT_ESP_PROPOSALS),
      ahProposals: protocol === 'esp' ? null : String(data.ah_proposals ?? DEFAULT_AH_PROPOSALS),
      localTs: (data.local_ts as string[] | undefined) ?? [],
      remoteTs: (data.remote_ts as string[] | undefined) ?? [],
      mode: data.mode === 'transport' ? 'transport' : 'tunnel',
      startAction: (str(data.start_action) ?? 'trap') as SwanctlConnection['startAction'],
      encap,
      psk: data.auth_method === 'cert' ? null : this.vpn.ipsec.secret(sa, 'psk') ?? null,
    };
  }

  /** The local CA's certificate and key for an SA (x509/, private/) and the CA itself (x509ca/), to be written 0600. */
  private certificateFiles(id: string, credentials: CredentialFile[]): { certFile: string; caFile: string } {
    if (!this.ca) throw new Error('the local CA is not available to the VPN area');
    const certFile = `local-${id.toLowerCase()}.pem`;
    credentials.push(
      { sub: 'x509', name: certFile, content: this.ca.detail(id).certificate_pem },
      { sub: 'private', name: certFile, content: this.ca.keyPem(id) },
      { sub: 'x509ca', name: 'bulwark-ca.pem', content: this.ca.caPem() },
    );
    return { certFile, caFile: 'bulwark-ca.pem' };
  }

  /** Renders every SA and loads them; with none left, charon is stopped. Throws 503/409 from the platform. */
  private async apply(): Promise<void> {
    const sas = this.vpn.ipsec.objects().filter((sa) => missingCredentials(sa.data) === null);
    const files = this.files();
    const { ipsec } = this.context.platform;
    if (sas.length === 0) {
      await ipsec.stop();
      rmSync(files.swanctlDir, { recursive: true, force: true });
      this.lastLoadError = null;
      return;
    }
    const dataPath = await ipsec.dataPath();
    // Everything is rendered before anything is written: a refused render leaves the files in force alone.
    const credentials: CredentialFile[] = [];
    const swanctlConf = renderSwanctl(sas.map((sa) => this.connection(sa, dataPath === 'libipsec', credentials)));
    const strongswanConf = renderStrongswanConf({ daemon: ipsec.daemon, plugins: [...PLUGINS, ...ipsec.kernelPlugins[dataPath]], viciSocket: files.viciSocket });
    if (!this.context.platform.simulated && process.getuid?.() === 0) prepareRuntimeRoot(runtimeRoot(this.context.config));
    mkdirSync(join(files.dir, 'state'), { recursive: true, mode: 0o700 });
    chmodSync(files.dir, 0o700);
    // Certificates of SAs no longer using them go with the old directory.
    rmSync(files.swanctlDir, { recursive: true, force: true });
    mkdirSync(files.swanctlDir, { recursive: true, mode: 0o700 });
    for (const { sub, name, content } of credentials) {
      mkdirSync(join(files.swanctlDir, sub), { recursive: true, mode: 0o700 });
      writeFileSync(join(files.swanctlDir, sub, name), content, { mode: 0o600 });
    }
    writeFileSync(join(files.swanctlDir, 'swanctl.conf'), swanctlConf, { mode: 0o600 });
    writeFileSync(files.strongswanConf, strongswanConf, { mode: 0o600 });
    try {
      await ipsec.apply(files);
      this.lastLoadError = null;
    } catch (error) {
      this.lastLoadError = (error as Error).message;
      throw error;
    }
  }

  /** Live state of every SA as charon reports it. */
  async status() {
    const live = await this.context.platform.ipsec.status();
    const byName = new Map(live.sas.map((sa) => [sa.name, sa]));
    const sas = this.vpn.ipsec.objects().map((sa) => {
      const state = byName.get(connectionName(sa.id));
      const installed = state?.children.some((child) => child.state === 'INSTALLED') ?? false;
      const status = state?.ike_state === 'ESTABLISHED' && installed ? 'up' as const : state ? 'connecting' as const : 'down' as const;
      return {
        id: sa.id, name: String(sa.data.name), status, not_loaded: missingCredentials(sa.data),
        ike_state: state?.ike_state ?? null, remote_host: state?.remote_host ?? null, established_secs: state?.established_secs ?? null,
        child_sas: state?.children ?? [],
      };
    });
    const { sas: _raw, ...daemon } = live;
    return { ...daemon, last_error: daemon.last_error ?? this.lastLoadError, simulated: this.context.platform.simulated, sas };
  }

  /** Server start: the stored SAs are loaded (a failure is logged; the API still starts). */
  boot(): Promise<void> {
    return this.one(() => this.apply()).catch((error: Error) => {
      this.context.log.error({ err: error.message }, 'IPsec SAs could not be loaded at start');
    });
  }

  /** Server stop: charon keeps running with its SAs (the API is not the appliance); the next start adopts it. */
  shutdown(): Promise<void> {
    return this.one(async () => this.context.platform.ipsec.release());
  }
}

/**
 * Flow export: the /settings/flow-export section, applied at once on PUT, at start and by every apply (reload,
 * restore, rollback). Collector names are resolved once through the outbound guard (special addresses only via
 * the administrator's allow-list, /settings/outbound) and the exporter is given the address the check looked at.
 */
import { isIP } from 'node:net';
import type { AppContext } from '../../context.js';
import { badRequest, conflict, HttpError } from '../../core/errors.js';
import type { ConfigData } from '../../store/config-store.js';
import { ADMIN_ALLOW_LIST_PATH, adminAllowList, adminDestinationProblem } from '../../net/admin-allow-list.js';
import { resolveGuardedHost } from '../../net/guarded-host.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import type { FlowCollector, FlowExportStatus } from '../../platform/flow-export.js';
import { FLOW_EXPORT_KIND, FlowExportConfig } from './schema.js';

interface Settings {
  enabled: boolean;
  protocol: 'netflow9' | 'ipfix';
  collectors: string[];
  active_timeout_secs: number;
  inactive_timeout_secs: number;
  sampling: number;
  interfaces: string[];
}

/** `host:port` or `[v6]:port` → its parts (the schema's pattern already holds). */
export function splitCollector(entry: string): { host: string; port: number } {
  const at = entry.lastIndexOf(':');
  return { host: entry.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(entry.slice(at + 1)) };
}

export class FlowExportService {
  readonly model: SingletonModel;
  private lastError: string | null = null;
  private resolved: FlowCollector[] = [];
  /** Whether this process asked the platform to export (a disabled export never touches a platform that has none). */
  private exporting = false;

  constructor(private readonly context: AppContext) {
    this.model = context.models.singleton({
      kind: FLOW_EXPORT_KIND, noun: 'flow export', writeAccess: 'settings:write', schema: FlowExportConfig,
      validate: (data) => this.validate(data as unknown as Settings),
    });
  }

  private validate(data: Settings): void {
    data.collectors.forEach((entry, index) => {
      const { host, port } = splitCollector(entry);
      if (!(port >= 1 && port <= 65535)) throw badRequest(`body.collectors.${index} must end in a port between 1 and 65535`);
      if (isIP(host) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(host)) {
        throw badRequest(`body.collectors.${index} must be host:port with a host name or an IP address`);
      }
      const refused = adminDestinationProblem(host, this.context.store);
      if (refused) throw badRequest(`body.collectors.${index}: ${refused}`);
    });
    if (new Set(data.interfaces).size !== data.interfaces.length) throw badRequest('body.interfaces must not name an interface twice');
    if (data.inactive_timeout_secs > data.active_timeout_secs) throw badRequest('body.inactive_timeout_secs must not exceed active_timeout_secs');
    if (data.enabled && data.collectors.length === 0) throw badRequest('body.collectors must name at least one collector when flow export is enabled');
    if (data.enabled && data.interfaces.length === 0) throw badRequest('body.interfaces must name at least one interface when flow export is enabled');
  }

  settings(): Settings {
    return this.model.read() as unknown as Settings;
  }

  /** Runs the export as stored (stops it when disabled). Throws 409/503 with the reason; the caller decides what to keep. */
  async applyStored(): Promise<FlowExportStatus | null> {
    const settings = this.settings();
    try {
      if (!settings.enabled) {
        if (!this.exporting) return null;
        const status = await this.context.platform.flowExport.apply(null);
        this.exporting = false;
        this.resolved = [];
        this.lastError = null;
        return status;
      }
      const allowList = adminAllowList(this.context.store);
      const collectors = await Promise.all(settings.collectors.map(async (entry, index) => {
        const { host, port } = splitCollector(entry);
        const { address } = await resolveGuardedHost(host, allowList).catch((error: Error) => {
          throw conflict(`flow export: collectors.${index} is refused (${error.message}); special addresses are reached only when an administrator names them in ${ADMIN_ALLOW_LIST_PATH}`);
        });
        return { address, port };
      }));
      const status = await this.context.platform.flowExport.apply({
        protocol: settings.protocol, collectors, activeTimeoutSecs: settings.active_timeout_secs, inactiveTimeoutSecs: settings.inactive_timeout_secs,
        sampling: settings.sampling, interfaces: settings.interfaces, runtime: this.context.config,
      });
      this.exporting = true;
      this.resolved = collectors;
      this.lastError = null;
      return status;
    } catch (error) {
      this.lastError = (error as Error).message;
      throw error;
    }
  }

  /** PUT: stores and applies; when the platform refuses, the previous settings are put back (and re-applied) and the refusal answered. */
  async update(patch: ConfigData): Promise<void> {
    const previous = this.model.read();
    this.model.write(patch);
    try {
      await this.applyStored();
    } catch (error) {
      this.model.write(previous);
      await this.applyStored().catch((again: Error) => this.context.log.error({ err: again.message }, 'the previous flow export could not be restored'));
      this.lastError = (error as Error).message;
      throw error instanceof HttpError ? error : conflict(`flow export: ${(error as Error).message}`);
    }
  }

  async view() {
    const config = this.settings();
    let status: FlowExportStatus | null = null;
    let error = this.lastError;
    if (this.exporting) {
      status = await this.context.platform.flowExport.status().catch((failure: Error) => {
        error = failure.message;
        return null;
      });
    }
    return {
      config,
      status: {
        exporter: status?.exporter ?? (this.context.platform.simulated ? 'simulated' : this.context.platform.name === 'linux' ? 'softflowd' : 'none'),
        running: status?.running ?? false,
        simulated: this.context.platform.simulated,
        interfaces: status?.interfaces ?? [],
        collectors: this.exporting ? this.resolved.map((c) => (isIP(c.address) === 6 ? `[${c.address}]:${c.port}` : `${c.address}:${c.port}`)) : [],
        last_error: error,
      },
    };
  }
}

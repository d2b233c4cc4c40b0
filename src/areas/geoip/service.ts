import { isIP } from 'node:net';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { badRequest } from '../../core/errors.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { GeoDatabase } from './database.js';
import { compileGeoIp, geoSetName, type CompiledGeoIp } from '../../compile/geoip-sets.js';
import { GeoRuleComputed, GeoRuleStored } from './schema.js';

/** Geo-IP allow/block rules by country and address lookups in the shipped country dataset. */
export class GeoIpService {
  readonly rules: CollectionModel;
  readonly kind = 'geoip_rule';
  private cache?: { key: string; compiled: CompiledGeoIp };
  private readonly refreshed = new Set<() => Promise<void>>();

  constructor(context: AppContext, private readonly database = new GeoDatabase()) {
    const { database: db } = this;
    this.rules = context.models.collection({
      kind: 'geoip_rule', noun: 'geo-IP rule', writeAccess: 'geoip:write',
      schema: GeoRuleStored,
      computed: {
        schema: GeoRuleComputed,
        add: (object) => ({ country_code: String(object.data.country), cidr_count: db.cidrCount(String(object.data.country)) }),
      },
    });
  }

  private fields(body: ConfigData): ConfigData {
    const data: ConfigData = {};
    if (body.country_code !== undefined) {
      const code = String(body.country_code).trim().toUpperCase();
      if (!/^[A-Z]{2}$/.test(code)) throw badRequest('body.country_code must be exactly 2 letters (ISO 3166-1 alpha-2)');
      if (!this.database.countryName(code)) throw badRequest(`body.country_code: "${code}" is not a country code`);
      data.country = code;
    }
    if (body.action !== undefined) {
      const action = String(body.action).toLowerCase();
      const map: Record<string, string> = { allow: 'allow', pass: 'allow', block: 'block', deny: 'block' };
      if (!map[action]) throw badRequest('body.action must be one of: allow, block');
      data.action = map[action];
    }
    if (body.status !== undefined) data.status = body.status;
    if (body.label !== undefined) data.label = body.label;
    return data;
  }

  create(body: ConfigData): ConfigObject {
    return this.rules.create({ ...this.fields(body), status: 'active' });
  }

  update(id: string, body: ConfigData): ConfigObject {
    return this.rules.update(id, this.fields(body));
  }

  /** Rules ordered by country, as the reference lists them. */
  list() {
    return this.rules.records().sort((a, b) => String(a.country).localeCompare(String(b.country)));
  }

  lookup(ip: string) {
    if (!isIP(ip)) throw badRequest(`params.ip: ${JSON.stringify(ip)} is not an IP address`);
    const { country, network } = this.database.lookup(ip);
    return {
      ip, country, network, country_code: country, country_name: country ? this.database.countryName(country) : null, found: country !== null,
      asn: null, as_org: null, source: this.database.source,
    };
  }

  /**
   * The active rules compiled into merged address sets (compile/geoip-sets.ts), kept until a rule or the
   * data changes: the packet filter asks on every reload.
   */
  compiled(): CompiledGeoIp {
    const rules = this.rules.objects().map((o) => ({ id: o.id, country: String(o.data.country), action: o.data.action as 'allow' | 'block', status: o.data.status as 'active' | 'disabled' }));
    const key = `${this.database.generation}|${rules.filter((r) => r.status === 'active').map((r) => `${r.country}:${r.action}`).sort().join(',')}`;
    if (this.cache?.key !== key) this.cache = { key, compiled: compileGeoIp(rules, (country) => this.database.ranges(country)) };
    return this.cache.compiled;
  }

  /** Runs after a refresh: the packet filter reloads the ruleset the sets are part of. */
  onRefreshed(listener: () => Promise<void>): void {
    this.refreshed.add(listener);
  }

  /** Re-reads the country data from disk, compiles again and has the ruleset in force rebuilt (POST /geoip/refresh). */
  async refresh(): Promise<{ countries: number; sets: { name: string; elements: number }[] }> {
    this.database.reload();
    const compiled = this.compiled();
    for (const listener of this.refreshed) await listener();
    return {
      countries: this.database.countries().length,
      sets: compiled.sets.map((set) => ({ name: geoSetName(set.action, set.family), elements: set.intervals.length })),
    };
  }
}

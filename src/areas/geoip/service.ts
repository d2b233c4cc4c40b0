import { isIP } from 'node:net';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import { badRequest } from '../../core/errors.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { GeoDatabase } from './database.js';
import { GeoRuleComputed, GeoRuleStored } from './schema.js';

const database = new GeoDatabase();

/** Geo-IP allow/block rules by country and address lookups in the shipped country dataset. */
export class GeoIpService {
  readonly rules: CollectionModel;

  constructor(context: AppContext) {
    this.rules = context.models.collection({
      kind: 'geoip_rule', noun: 'geo-IP rule', writeAccess: 'geoip:write',
      schema: GeoRuleStored,
      computed: {
        schema: GeoRuleComputed,
        add: (object) => ({ country_code: String(object.data.country), cidr_count: database.cidrCount(String(object.data.country)) }),
      },
    });
  }

  private fields(body: ConfigData): ConfigData {
    const data: ConfigData = {};
    if (body.country_code !== undefined) {
      const code = String(body.country_code).trim().toUpperCase();
      if (!/^[A-Z]{2}$/.test(code)) throw badRequest('body.country_code must be exactly 2 letters (ISO 3166-1 alpha-2)');
      if (!database.countryName(code)) throw badRequest(`body.country_code: "${code}" is not a country code`);
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
    if (!isIP(ip)) throw badRequest(`"${ip}" is not an IP address`);
    const { country, network } = database.lookup(ip);
    return {
      ip, country, network, country_code: country, country_name: country ? database.countryName(country) : null, found: country !== null,
      asn: null, as_org: null, source: database.source,
    };
  }

  /** The packet-filter anchor for the active rules (tables of each country's networks, then pass/block). */
  compileAnchor(): string {
    const lines: string[] = [];
    for (const rule of this.rules.objects().filter((o) => o.data.status === 'active')) {
      const cc = String(rule.data.country);
      const table = `geoip_${cc.toLowerCase()}`;
      lines.push(`table <${table}> persist`);
      const label = (rule.data.label as string | null) ?? `geoip-${String(rule.data.action)}-${cc}`;
      lines.push(rule.data.action === 'allow' ? `pass in quick from <${table}> label "${label}"` : `block drop in quick from <${table}> label "${label}"`);
    }
    return lines.join('\n') + (lines.length ? '\n' : '');
  }
}

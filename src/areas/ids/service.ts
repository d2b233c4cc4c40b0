import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { EVENT_TOPICS } from '../../core/events.js';
import { join } from 'node:path';
import type { AlertFeed, IdsAlert } from '../../live/feeds.js';
import type { AppContext } from '../../context.js';
import type { CollectionModel } from '../../model/collection-model.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { badRequest, notFound, unavailable } from '../../core/errors.js';
import { isoTime } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import { outboundFetch } from '../../net/outbound.js';
import { parseCidr } from '../../net/address.js';
import { isCidr, isInterfaceName } from '../../render/grammar.js';
import { isAddressGroupEntry, renderSuricataYaml } from '../../render/suricata/suricata-yaml.js';
import { prepareDaemonRuntime, programRuntime, writeDaemonFile } from '../../platform/daemon-runtime.js';
import type { IdsInstall } from '../../platform/ids-engine.js';
import { ServiceState } from '../common/service-state.js';
import { APPLIED_IDS_KEY, NOTHING_APPLIED_IDS, type AppliedIds } from './applied-ids.js';

/** Removes the files of a directory that are not in `keep` (rulesets disabled or removed since). */
function pruneDir(dir: string, keep: string[]): void {
  for (const name of readdirSync(dir)) if (!keep.includes(join(dir, name))) rmSync(join(dir, name), { force: true });
}

/** The NFQUEUE number IPS mode reads from (the packet filter's queue rule sends there). */
export const IPS_QUEUE = 0;
import { BlockList, isIP } from 'node:net';
import { IdsConfig, RulesetStored, SuppressionStored } from './schema.js';
import { parseRuleLine, parseRulesFile, withAction } from './rules-parser.js';
import { suricataRuleLine, suricataRuleProblem, suricataSuppressLine } from '../../render/suricata/suricata.js';

const OVERRIDE_ACTIONS = new Set(['alert', 'drop', 'reject', 'pass']);

/**
 * Rules text sent by a client is refused as a whole (400 naming the line) when one rule line is unsafe; a
 * downloaded file has its unsafe rules left out and counted, so one Lua rule does not block a vendor ruleset.
 */
function screenRules(text: string, origin: 'request' | 'download'): { text: string; refused: number } {
  const kept: string[] = [];
  let refused = 0;
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    // Lines that are not rules (blank, plain comments) are never installed, so only rules are screened.
    const rule = parseRuleLine(line);
    // A client's text holds rules, comments and blank lines only; a broken rule is named rather than dropped.
    const comment = /^\s*(#.*)?$/.test(line) && !/[\u0000-\u0008\u000b-\u001f\u007f]/.test(line);
    const problem = rule ? suricataRuleProblem(rule.rule_text) : comment ? null : 'is neither a complete Suricata rule nor a comment';
    if (problem === null || (!rule && origin === 'download')) {
      kept.push(line);
      continue;
    }
    if (origin === 'request') throw badRequest(`body.rules_text line ${index + 1}: ${problem}`);
    refused++;
  }
  return { text: kept.join('\n'), refused };
}

const MAX_DOWNLOAD_BYTES = 64 * 1024 * 1024;

interface RuleRow {
  id: string; ruleset_id: string; sid: number | null; gid: number; rev: number | null; action: string; rule_text: string;
  msg: string | null; classtype: string | null; severity: number; enabled: number; action_override: string | null;
  hit_count: number; last_hit: string | null; created_at: string;
}

interface AlertRow {
  id: string; timestamp: string; signature_id: number | null; signature_msg: string; severity: number; src_ip: string;
  dst_ip: string; src_port: number | null; dst_port: number | null; protocol: string; action: string; rule_source: string;
  flow_id: string | null; payload_excerpt: string | null; metadata: string | null; acknowledged: number;
  classification: string; analyst_notes: string | null;
}

export type IdsAlertRecord = ReturnType<typeof toAlert>;

const toRule = (row: RuleRow) => ({
  id: row.id, ruleset_id: row.ruleset_id, sid: row.sid, rev: row.rev, rule_text: row.rule_text, msg: row.msg,
  classtype: row.classtype, severity: row.severity, enabled: row.enabled === 1, action_override: row.action_override,
  hit_count: row.hit_count, last_hit: row.last_hit, created_at: row.created_at,
});

function toAlert(row: AlertRow) {
  return {
    ...row,
    acknowledged: row.acknowledged === 1,
    metadata: row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : null,
  };
}

/** Full-text query of the user's words: each becomes a quoted prefix term, so FTS syntax can never break. */
export function ftsQuery(text: string): string | null {
  const terms = text.match(/[\p{L}\p{N}_]+/gu) ?? [];
  return terms.length === 0 ? null : terms.slice(0, 16).map((term) => `"${term}"*`).join(' ');
}

/** Printable ASCII stays text; anything else becomes space-separated hex pairs (at most 256 bytes). */
export function payloadExcerpt(base64: string | undefined): string | null {
  if (!base64) return null;
  const bytes = Buffer.from(base64, 'base64').subarray(0, 256);
  const printable = bytes.every((b) => (b >= 0x20 && b < 0x7f) || b === 0x0a || b === 0x0d || b === 0x09);
  return printable ? bytes.toString('latin1') : [...bytes].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
}

/** IDS/IPS: engine configuration, rulesets and their SIDs (FTS5-indexed), suppressions and alerts. */
export class IdsService {
  readonly config: SingletonModel;
  readonly rulesets: CollectionModel;
  readonly suppressions: CollectionModel;
  private readonly state: ServiceState;

  constructor(
    private readonly context: AppContext,
    private readonly alertFeed: AlertFeed,
  ) {
    // Alerts the engine writes to its EVE log are stored as they are written (only a real engine writes one).
    if (context.platform.idsEngine.kind === 'suricata') context.platform.idsEngine.onEve((lines) => {
      try {
        this.ingestEve(lines);
      } catch (error) {
        context.log.warn({ err: error }, 'EVE lines from the IDS engine not stored');
      }
    });
    this.state = new ServiceState(context.db, context.clock);
    // A coordinated apply records its version after every applier ran: stamp it on what the engine was made to run.
    context.apply.onApplied((event) => {
      const applied = this.applied();
      if (applied.awaiting_version) this.state.set(APPLIED_IDS_KEY, { ...applied, version: event.version.version, awaiting_version: false });
    });
    const { models } = context;
    this.config = models.singleton({
      kind: 'ids_config', noun: 'IDS engine configuration', writeAccess: 'ids:write', schema: IdsConfig,
      validate: (data) => {
        for (const field of ['home_net', 'external_net'] as const) {
          for (const entry of data[field] as string[]) {
            const plain = entry.replace(/^!/, '');
            if (!(plain.startsWith('$') ? isAddressGroupEntry(entry) : parseCidr(plain))) throw badRequest(`body.${field}: "${entry}" is not a CIDR, an address or a $VARIABLE`);
          }
        }
        const badInterface = (data.interfaces as string[]).find((name) => !isInterfaceName(name));
        if (badInterface !== undefined) throw badRequest(`body.interfaces: "${badInterface}" is not an interface name`);
      },
    });
    this.rulesets = models.collection({
      kind: 'ids_ruleset', noun: 'ruleset', writeAccess: 'ids:write',
      schema: RulesetStored,
      unique: [{ field: 'name', caseInsensitive: true }],
      validate: (data) => {
        if (data.source_url !== null && data.source_url !== undefined) {
          try {
            const url = new URL(String(data.source_url));
            if (url.protocol !== 'https:') throw new Error();
          } catch {
            throw badRequest('body.source_url must be an https URL');
          }
        }
      },
    });
    this.suppressions = models.collection({
      kind: 'ids_suppression', noun: 'suppression', writeAccess: 'ids:write',
      schema: SuppressionStored,
      validate: (data) => {
        if (data.ip_cidr !== null && data.ip_cidr !== undefined && !isCidr(String(data.ip_cidr))) {
          throw badRequest(`body.ip_cidr: "${String(data.ip_cidr)}" is not an IP address or CIDR`);
        }
      },
    });
  }

  private get db() {
    return this.context.db;
  }

  // ---- rulesets and rules ---------------------------------------------------------------------------

  async createRuleset(body: ConfigData): Promise<ConfigObject> {
    const { rules_text: rulesText, ...data } = body;
    const object = this.rulesets.create(data);
    return this.afterRulesetChange(object, rulesText as string | undefined);
  }

  async updateRuleset(id: string, body: ConfigData): Promise<ConfigObject> {
    const { rules_text: rulesText, id: _id, last_updated: _lu, rule_count: _rc, last_error: _le, created_at: _c, updated_at: _u, ...patch } = body;
    const object = this.rulesets.update(id, patch);
    return this.afterRulesetChange(object, rulesText as string | undefined);
  }

  /**
   * Install mechanism: given rules text is installed at once; otherwise an enabled ruleset without rules and
   * with a source URL is downloaded (through the outbound guard). A failed download is kept in last_error.
   */
  private async afterRulesetChange(object: ConfigObject, rulesText: string | undefined): Promise<ConfigObject> {
    if (rulesText !== undefined) return this.installRules(object.id, screenRules(rulesText, 'request').text);
    if (object.data.enabled === true && object.data.rule_count === 0 && object.data.source_url) {
      try {
        const response = await outboundFetch(String(object.data.source_url), {}, { timeoutMs: 120_000, maxBytes: MAX_DOWNLOAD_BYTES });
        if (!response.ok) throw new Error(`download answered HTTP ${response.status}`);
        const screened = screenRules(await response.text(), 'download');
        const installed = this.installRules(object.id, screened.text);
        if (screened.refused === 0) return installed;
        const note = `${screened.refused} rule(s) left out: they use a keyword that runs a script or names a file`;
        return this.context.store.update('ids_ruleset', object.id, { ...installed.data, last_error: note })!;
      } catch (error) {
        this.context.log.warn({ ruleset: object.id, err: (error as Error).message }, 'ruleset download failed');
        return this.context.store.update('ids_ruleset', object.id, { ...object.data, last_error: (error as Error).message.slice(0, 1000) })!;
      }
    }
    return object;
  }

  /** Replaces a ruleset's rules with the parsed file, keeping overrides of SIDs that remain. */
  installRules(rulesetId: string, text: string): ConfigObject {
    const ruleset = this.rulesets.find(rulesetId);
    if (ruleset.data.rule_format !== 'suricata') throw badRequest(`body.rules_text: only Suricata-syntax rules can be installed (ruleset is ${String(ruleset.data.rule_format)})`);
    const parsed = parseRulesFile(text);
    const now = isoTime(this.context.clock.now());
    const previous = new Map(
      (this.db.prepare('SELECT sid, enabled, action_override, hit_count, last_hit FROM ids_rules WHERE ruleset_id = ? AND sid IS NOT NULL').all(rulesetId) as RuleRow[])
        .map((row) => [row.sid, row]),
    );
    const insert = this.db.prepare(`INSERT INTO ids_rules (id, ruleset_id, sid, gid, rev, action, rule_text, msg, classtype, severity, enabled, action_override, hit_count, last_hit, created_at)
      VALUES (@id, @ruleset_id, @sid, @gid, @rev, @action, @rule_text, @msg, @classtype, @severity, @enabled, @action_override, @hit_count, @last_hit, @created_at)`);
    const index = this.db.prepare('INSERT INTO ids_rules_fts (rule_id, sid, msg, rule_text) VALUES (?, ?, ?, ?)');
    return this.context.store.transaction(() => {
      this.deleteRules(rulesetId);
      for (const rule of parsed) {
        const kept = rule.sid !== null ? previous.get(rule.sid) : undefined;
        const id = newId();
        insert.run({
          id, ruleset_id: rulesetId, sid: rule.sid, gid: rule.gid, rev: rule.rev, action: rule.action, rule_text: rule.rule_text,
          msg: rule.msg, classtype: rule.classtype, severity: rule.severity,
          enabled: kept ? kept.enabled : rule.enabled ? 1 : 0,
          action_override: kept?.action_override ?? null, hit_count: kept?.hit_count ?? 0, last_hit: kept?.last_hit ?? null, created_at: now,
        });
        index.run(id, rule.sid === null ? '' : String(rule.sid), rule.msg ?? '', rule.rule_text);
      }
      return this.context.store.update('ids_ruleset', rulesetId, { ...ruleset.data, rule_count: parsed.length, last_updated: now, last_error: null })!;
    });
  }

  private deleteRules(rulesetId: string): void {
    this.db.prepare('DELETE FROM ids_rules_fts WHERE rule_id IN (SELECT id FROM ids_rules WHERE ruleset_id = ?)').run(rulesetId);
    this.db.prepare('DELETE FROM ids_rules WHERE ruleset_id = ?').run(rulesetId);
  }

  deleteRuleset(id: string): void {
    this.context.store.transaction(() => {
      this.rulesets.remove(id);
      this.deleteRules(id);
    });
  }

  /** Lists rules with filters; `q` is a full-text query over SID, message and rule text (best match first). */
  rules(query: { ruleset_id?: string; enabled?: boolean; sid?: number; q?: string; search?: string; limit: number; offset: number }) {
    const where: string[] = [];
    const args: unknown[] = [];
    if (query.ruleset_id) {
      where.push('r.ruleset_id = ?');
      args.push(query.ruleset_id);
    }
    if (query.enabled === true) {
      const enabledSets = this.rulesets.objects().filter((o) => o.data.enabled === true).map((o) => o.id);
      where.push(`r.enabled = 1 AND r.ruleset_id IN (${enabledSets.map(() => '?').join(',') || "''"})`);
      args.push(...enabledSets);
    } else if (query.enabled === false) {
      where.push('r.enabled = 0');
    }
    if (query.sid !== undefined) {
      where.push('r.sid = ?');
      args.push(query.sid);
    }
    const text = query.q ?? query.search;
    const match = text !== undefined ? ftsQuery(text) : null;
    if (text !== undefined && !match) throw badRequest('querystring.q must contain at least one word or number');
    const from = match ? 'ids_rules_fts f JOIN ids_rules r ON r.id = f.rule_id' : 'ids_rules r';
    if (match) {
      where.push('ids_rules_fts MATCH ?');
      args.push(match);
    }
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const order = match ? 'ORDER BY bm25(ids_rules_fts), r.sid' : 'ORDER BY r.sid, r.created_at';
    const total = (this.db.prepare(`SELECT count(*) AS n FROM ${from} ${clause}`).get(...args) as { n: number }).n;
    const rows = this.db.prepare(`SELECT r.* FROM ${from} ${clause} ${order} LIMIT ? OFFSET ?`).all(...args, query.limit, query.offset) as RuleRow[];
    return { total, rules: rows.map(toRule) };
  }

  rule(id: string) {
    const row = this.db.prepare('SELECT * FROM ids_rules WHERE id = ?').get(id) as RuleRow | undefined;
    if (!row) throw notFound(`rule ${id} not found`);
    return toRule(row);
  }

  updateRule(id: string, body: { enabled?: boolean; action_override?: string | null }) {
    this.rule(id);
    if (body.enabled !== undefined) this.db.prepare('UPDATE ids_rules SET enabled = ? WHERE id = ?').run(body.enabled ? 1 : 0, id);
    if (body.action_override !== undefined) {
      this.db.prepare('UPDATE ids_rules SET action_override = ? WHERE id = ?').run(body.action_override === '' ? null : body.action_override, id);
    }
    return this.rule(id);
  }

  // ---- engine ----------------------------------------------------------------------------------------

  /** The engine's rule file: enabled rules of enabled rulesets, action overrides applied. */
  /** The checked rules of the enabled rulesets (or of the one ruleset given), overrides applied, SID order. */
  compileRules(only?: string): string {
    const enabledSets = this.rulesets.objects().filter((o) => o.data.enabled === true && (only === undefined || o.id === only)).map((o) => o.id);
    if (enabledSets.length === 0) return '';
    const rows = this.db.prepare(`SELECT sid, rule_text, action_override FROM ids_rules WHERE enabled = 1 AND ruleset_id IN (${enabledSets.map(() => '?').join(',')}) ORDER BY sid`)
      .all(...enabledSets) as { sid: number | null; rule_text: string; action_override: string | null }[];
    // A stored rule that no longer passes the grammar (an older release, a restored database) is left out.
    const lines: string[] = [];
    for (const row of rows) {
      const text = row.action_override && OVERRIDE_ACTIONS.has(row.action_override) ? withAction(row.rule_text, row.action_override) : row.rule_text;
      if (suricataRuleProblem(text) !== null) {
        this.context.log.warn({ sid: row.sid }, 'stored IDS rule left out of bulwark.rules: it does not pass the rule grammar');
        continue;
      }
      lines.push(suricataRuleLine(text, 'ids rule'));
    }
    return lines.join('\n') + (lines.length ? '\n' : '');
  }

  /** Suricata threshold.config lines for the suppressions. */
  compileSuppressions(): string {
    return this.suppressions.objects().map((o) => {
      const { sid, suppress_type: type, ip_cidr: ip } = o.data as { sid: number; suppress_type: string; ip_cidr: string | null };
      const track = type === 'src' ? 'by_src' : type === 'dst' ? 'by_dst' : type === 'both' ? 'by_either' : null;
      return `${suricataSuppressLine(sid, track, ip || null, `ids suppression ${o.id}`)}\n`;
    }).join('');
  }

  /** What the stored configuration, rules and suppressions would run: what `POST /ids/reload` applies. */
  private storedSnapshot(): AppliedIds {
    return {
      recorded: true, config: this.config.read(), rules: this.compileRules(), threshold: this.compileSuppressions(), version: null,
      rulesets: this.rulesets.objects().filter((o) => o.data.enabled === true).map((o) => ({ id: o.id, rules: this.compileRules(o.id) })),
    };
  }

  /** What the engine was last made to run (the applied record): a start of Bulwark brings back this. */
  applied(): AppliedIds {
    return this.state.get(APPLIED_IDS_KEY, NOTHING_APPLIED_IDS);
  }

  /** Applies the stored configuration and rules; recorded as applied once the engine took them. */
  async reload(): Promise<{ message: string; loaded_rules: number }> {
    const snapshot = this.storedSnapshot();
    const result = await this.run(snapshot, false);
    this.state.set(APPLIED_IDS_KEY, {
      ...snapshot, version: this.context.apply.versions.activeIfCurrent()?.version ?? null, awaiting_version: true,
    } satisfies AppliedIds);
    return result;
  }

  /**
   * Start of Bulwark: runs the applied record, never pending edits. An engine an earlier API process left running
   * with that configuration is adopted (and kept, supervised, even when the checker now refuses the rules).
   */
  async restoreApplied(): Promise<void> {
    const applied = this.applied();
    if (applied.recorded) {
      await this.run(applied, true);
      return;
    }
    // No record: a database from before records were kept (an upgrade). What is stored is then what ran, as networking
    // assumes; an engine that was on must not stay off until someone reloads. A fresh install's IDS is disabled.
    const stored = this.storedSnapshot();
    if (stored.config.mode === undefined || stored.config.mode === 'disabled') return;
    await this.run(stored, true);
    this.state.set(APPLIED_IDS_KEY, { ...stored, version: this.context.apply.versions.activeVersion() ?? null } satisfies AppliedIds);
  }

  private async run(snapshot: AppliedIds, restoring: boolean): Promise<{ message: string; loaded_rules: number }> {
    const { config, rules, threshold } = snapshot;
    const engine = this.context.platform.idsEngine;
    const mode = config.mode as 'ids' | 'ips' | 'disabled';
    if (engine.kind !== 'suricata') {
      const dir = join(this.context.config.dataDir, 'ids');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(join(dir, 'bulwark.rules'), rules);
      writeFileSync(join(dir, 'threshold.config'), threshold);
      await engine.reload({ mode, rules, interfaces: config.interfaces as string[] });
    } else {
      const status = await engine.status();
      if (!status.installed) throw unavailable(status.engine);
      // Suricata reads its files from its runtime directory (the data directory is private).
      const runtime = programRuntime(this.context.config, 'suricata', 'suricata');
      prepareDaemonRuntime(runtime);
      let install: IdsInstall | undefined;
      if (mode !== 'disabled') {
        const interfaces = (config.interfaces as string[]).length ? (config.interfaces as string[]) : (await this.context.platform.network.interfaces()).map((item) => item.name).filter((name) => name !== 'lo');
        const yaml = renderSuricataYaml({
          mode, homeNet: config.home_net as string[], externalNet: config.external_net as string[], interfaces, ruleDir: runtime.dir, logDir: runtime.stateDir, queue: IPS_QUEUE,
          workerCount: (config.worker_count as number | null) ?? null, flowTableSize: (config.flow_table_size as number | null) ?? null,
          streamDepthMb: (config.stream_depth as number | null) ?? null, reassemblyBudgetMb: (config.flow_reassembly_budget_mb as number | null) ?? null,
        });
        // One source file per enabled ruleset (already checked, overrides applied); suricata-update merges them.
        const sources = snapshot.rulesets.map((set) => writeDaemonFile(runtime, ['sources', `${set.id}.rules`], set.rules));
        if (sources.length === 0) sources.push(writeDaemonFile(runtime, ['sources', 'empty.rules'], ''));
        pruneDir(join(runtime.dir, 'sources'), sources);
        writeDaemonFile(runtime, ['threshold.config'], threshold);
        install = { configFile: writeDaemonFile(runtime, ['suricata.yaml'], yaml), logDir: runtime.stateDir, ruleDir: runtime.dir, sources, queue: IPS_QUEUE };
      }
      await engine.reload({ mode, rules, interfaces: config.interfaces as string[], install, restoring });
    }
    const status = await engine.status();
    return { message: 'rules reloaded', loaded_rules: status.loaded_rules };
  }

  /** The engine's buffer counters; 503 naming what to install when there is no engine. */
  async bufferStats() {
    const status = await this.context.platform.idsEngine.status();
    if (!status.installed) throw unavailable(status.engine);
    return { alerts_total: status.alerts_total, running: status.running, uptime_secs: status.uptime_secs, simulated: this.context.platform.simulated };
  }

  async stats() {
    const engine = await this.context.platform.idsEngine.status();
    const config = this.config.read();
    const label = (severity: number) => (severity <= 1 ? 'critical' : severity === 2 ? 'high' : severity === 3 ? 'medium' : 'info');
    const severityRows = this.db.prepare('SELECT severity, count(*) AS n FROM ids_alerts GROUP BY severity ORDER BY severity').all() as { severity: number; n: number }[];
    const signatures = this.db.prepare('SELECT signature_msg AS k, count(*) AS n FROM ids_alerts GROUP BY signature_msg ORDER BY n DESC, k LIMIT 10').all() as { k: string; n: number }[];
    const sources = this.db.prepare('SELECT src_ip AS k, count(*) AS n FROM ids_alerts GROUP BY src_ip ORDER BY n DESC, k LIMIT 10').all() as { k: string; n: number }[];
    const alertsStored = (this.db.prepare('SELECT count(*) AS n FROM ids_alerts').get() as { n: number }).n;
    const sets = this.rulesets.objects();
    return {
      mode: String(config.mode),
      simulated: this.context.platform.simulated,
      engine: engine.engine,
      engine_installed: engine.installed,
      engine_restarts: engine.restarts ?? 0,
      engine_last_error: engine.last_error ?? null,
      severity_counts: severityRows.map((r) => [label(r.severity), r.n] as [string, number]),
      top_signatures: signatures.map((r) => [r.k, r.n] as [string, number]),
      top_sources: sources.map((r) => [r.k, r.n] as [string, number]),
      loaded_rules: engine.loaded_rules,
      enabled_rulesets: sets.filter((o) => o.data.enabled === true).length,
      total_rulesets: sets.length,
      running: engine.running,
      packets_inspected: engine.packets_inspected,
      alerts_total: Math.max(engine.alerts_total, alertsStored),
      flow_count: engine.flow_count,
      flow_reassembly_bytes: engine.flow_reassembly_bytes,
      uptime_secs: engine.uptime_secs,
      stats: {
        packets_inspected: engine.packets_inspected, alerts_total: Math.max(engine.alerts_total, alertsStored), drops_total: engine.drops_total,
        bytes_per_sec: engine.bytes_per_sec, active_flows: engine.flow_count, packets_per_sec: engine.packets_per_sec, uptime_secs: engine.uptime_secs,
      },
    };
  }

  // ---- alerts ----------------------------------------------------------------------------------------

  alerts(query: { severity?: number; src_ip?: string; signature_id?: number; acknowledged?: boolean; classification?: string; limit: number; offset: number }) {
    const where: string[] = [];
    const args: unknown[] = [];
    for (const field of ['severity', 'src_ip', 'signature_id'] as const) {
      if (query[field] !== undefined) {
        where.push(`${field} = ?`);
        args.push(query[field]);
      }
    }
    if (query.acknowledged !== undefined) {
      where.push('acknowledged = ?');
      args.push(query.acknowledged ? 1 : 0);
    }
    if (query.classification === 'reviewed') where.push("classification <> 'unreviewed'");
    else if (query.classification !== undefined) {
      where.push('classification = ?');
      args.push(query.classification);
    }
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const total = (this.db.prepare(`SELECT count(*) AS n FROM ids_alerts ${clause}`).get(...args) as { n: number }).n;
    const rows = this.db.prepare(`SELECT * FROM ids_alerts ${clause} ORDER BY timestamp DESC, rowid DESC LIMIT ? OFFSET ?`).all(...args, query.limit, query.offset) as AlertRow[];
    return { total, alerts: rows.map(toAlert) };
  }

  alert(id: string) {
    const row = this.db.prepare('SELECT * FROM ids_alerts WHERE id = ?').get(id) as AlertRow | undefined;
    if (!row) throw notFound(`alert ${id} not found`);
    return toAlert(row);
  }

  acknowledge(id: string): void {
    this.alert(id);
    this.db.prepare('UPDATE ids_alerts SET acknowledged = 1 WHERE id = ?').run(id);
  }

  classify(id: string, classification: string, notes: string | null | undefined): void {
    this.alert(id);
    this.db.prepare('UPDATE ids_alerts SET classification = ?, analyst_notes = ?, acknowledged = 1 WHERE id = ?').run(classification, notes ?? null, id);
  }

  /**
   * Records a model's verdict on one alert as a suggestion in its notes. The verdict comes from text an
   * attacker can write (the payload is in the prompt), so it never classifies, acknowledges or closes anything,
   * and never reaches other alerts: the operator classifies (PUT /ids/alerts/{id}/classify). True when noted.
   */
  suggest(alertId: string, note: string): boolean {
    return this.db.prepare("UPDATE ids_alerts SET analyst_notes = ? WHERE id = ? AND classification = 'unreviewed'").run(note, alertId).changes === 1;
  }

  purgeAlerts(): number {
    return this.db.prepare('DELETE FROM ids_alerts').run().changes;
  }

  /** Whether a suppression silences this SID for these addresses. */
  private suppressed(sid: number | null, src: string, dst: string): boolean {
    if (sid === null) return false;
    return this.suppressions.objects().some((o) => {
      if (o.data.sid !== sid) return false;
      const cidr = o.data.ip_cidr as string | null;
      if (!cidr) return true;
      const parsed = parseCidr(cidr)!;
      const list = new BlockList();
      const family = parsed.family === 6 ? 'ipv6' : 'ipv4';
      if (parsed.prefix === undefined) list.addAddress(parsed.address, family);
      else list.addSubnet(parsed.address, parsed.prefix, family);
      const hit = (ip: string) => isIP(ip) === parsed.family && list.check(ip, family);
      return o.data.suppress_type === 'src' ? hit(src) : o.data.suppress_type === 'dst' ? hit(dst) : hit(src) || hit(dst);
    });
  }

  /**
   * Ingests Suricata EVE JSON lines: every `alert` event not silenced by a suppression becomes an alert;
   * rule hit counters follow. Other event types and unparsable lines are counted and skipped.
   */
  ingestEve(text: string): { ingested: number; suppressed: number; skipped: number } {
    const result = { ingested: 0, suppressed: 0, skipped: 0 };
    const insert = this.db.prepare(`INSERT INTO ids_alerts (id, timestamp, signature_id, signature_msg, severity, src_ip, dst_ip, src_port, dst_port, protocol, action, rule_source, flow_id, payload_excerpt, metadata)
      VALUES (@id, @timestamp, @signature_id, @signature_msg, @severity, @src_ip, @dst_ip, @src_port, @dst_port, @protocol, @action, @rule_source, @flow_id, @payload_excerpt, @metadata)`);
    const hit = this.db.prepare('UPDATE ids_rules SET hit_count = hit_count + 1, last_hit = ? WHERE sid = ?');
    const stored: IdsAlert[] = [];
    const announced: Record<string, unknown>[] = [];
    this.db.transaction(() => {
      for (const line of text.split('\n')) {
        if (!line.trim()) continue;
        let event: Record<string, any>;
        try {
          event = JSON.parse(line) as Record<string, any>;
        } catch {
          result.skipped++;
          continue;
        }
        if (event.event_type !== 'alert' || typeof event.alert !== 'object') {
          result.skipped++;
          continue;
        }
        const alert = event.alert as Record<string, any>;
        const sid = Number.isInteger(alert.signature_id) ? (alert.signature_id as number) : null;
        const src = String(event.src_ip ?? '');
        const dst = String(event.dest_ip ?? '');
        if (this.suppressed(sid, src, dst)) {
          result.suppressed++;
          continue;
        }
        const timestamp = Number.isNaN(Date.parse(event.timestamp)) ? isoTime(this.context.clock.now()) : new Date(event.timestamp).toISOString();
        const metadata: Record<string, string> = {};
        if (alert.category) metadata.category = String(alert.category);
        if (alert.rev !== undefined) metadata.rev = String(alert.rev);
        if (alert.gid !== undefined) metadata.gid = String(alert.gid);
        if (event.app_proto) metadata.app_proto = String(event.app_proto);
        if (event.in_iface) metadata.interface = String(event.in_iface);
        const action = alert.action === 'blocked' ? 'drop' : 'alert';
        insert.run({
          id: newId(), timestamp, signature_id: sid, signature_msg: String(alert.signature ?? ''), severity: Math.min(4, Math.max(1, Number(alert.severity) || 3)),
          src_ip: src, dst_ip: dst, src_port: Number.isInteger(event.src_port) ? event.src_port : null, dst_port: Number.isInteger(event.dest_port) ? event.dest_port : null,
          protocol: String(event.proto ?? '').toLowerCase(), action, rule_source: sid !== null && sid >= 2_000_000 && sid < 3_000_000 ? 'et_open' : 'custom',
          flow_id: event.flow_id !== undefined ? String(event.flow_id) : null, payload_excerpt: payloadExcerpt(event.payload), metadata: JSON.stringify(metadata),
        });
        if (sid !== null) hit.run(timestamp, sid);
        announced.push({
          signature_id: sid, signature: String(alert.signature ?? ''), severity: Math.min(4, Math.max(1, Number(alert.severity) || 3)), action,
          protocol: String(event.proto ?? '').toLowerCase(), src_ip: src, src_port: Number.isInteger(event.src_port) ? event.src_port : null,
          dst_ip: dst, dst_port: Number.isInteger(event.dest_port) ? event.dest_port : null, interface: metadata.interface ?? null, timestamp,
        });
        stored.push({ severity: Math.min(4, Math.max(1, Number(alert.severity) || 3)), signature_msg: String(alert.signature ?? ''), src_ip: src, dst_ip: dst, protocol: String(event.proto ?? '').toLowerCase(), timestamp });
        result.ingested++;
      }
    })();
    // Only committed alerts reach the dashboard's alert delta.
    for (const alert of stored) this.alertFeed.publish(alert);
    for (const alert of announced) this.context.events.emit(EVENT_TOPICS.idsAlert, alert);
    void this.context.platform.idsEngine.countAlerts(result.ingested).catch(() => undefined);
    return result;
  }
}

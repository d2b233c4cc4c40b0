import type { Migration } from './migrations.js';

/** Operational tables of the VPN, IDS, AI and multi-WAN areas (versions 30–39). Append only. */
export const AREAS_B_MIGRATIONS: Migration[] = [
  {
    version: 30,
    name: 'IDS rules with full-text index, alerts, seeded rulesets',
    sql: `
      CREATE TABLE ids_rules (
        id              TEXT PRIMARY KEY,
        ruleset_id      TEXT NOT NULL,
        sid             INTEGER,
        gid             INTEGER NOT NULL DEFAULT 1,
        rev             INTEGER,
        action          TEXT NOT NULL,
        rule_text       TEXT NOT NULL,
        msg             TEXT,
        classtype       TEXT,
        severity        INTEGER NOT NULL,
        enabled         INTEGER NOT NULL,
        action_override TEXT,
        hit_count       INTEGER NOT NULL DEFAULT 0,
        last_hit        TEXT,
        created_at      TEXT NOT NULL
      );
      CREATE INDEX ids_rules_ruleset_sid ON ids_rules (ruleset_id, sid);
      CREATE INDEX ids_rules_sid ON ids_rules (sid);
      CREATE VIRTUAL TABLE ids_rules_fts USING fts5 (rule_id UNINDEXED, sid, msg, rule_text, tokenize = 'unicode61');

      CREATE TABLE ids_alerts (
        id              TEXT PRIMARY KEY,
        timestamp       TEXT NOT NULL,
        signature_id    INTEGER,
        signature_msg   TEXT NOT NULL,
        severity        INTEGER NOT NULL,
        src_ip          TEXT NOT NULL,
        dst_ip          TEXT NOT NULL,
        src_port        INTEGER,
        dst_port        INTEGER,
        protocol        TEXT NOT NULL,
        action          TEXT NOT NULL,
        rule_source     TEXT NOT NULL,
        flow_id         TEXT,
        payload_excerpt TEXT,
        metadata        TEXT,
        acknowledged    INTEGER NOT NULL DEFAULT 0,
        classification  TEXT NOT NULL DEFAULT 'unreviewed',
        analyst_notes   TEXT
      );
      CREATE INDEX ids_alerts_timestamp ON ids_alerts (timestamp);
      CREATE INDEX ids_alerts_signature ON ids_alerts (signature_id);

      INSERT INTO config_objects (id, kind, position, data, created_at, updated_at) VALUES
        ('a0000000-0000-0000-0000-000000000001', 'ids_ruleset', 0,
         json('{"name":"ET Open (Emerging Threats)","source_url":"https://rules.emergingthreats.net/open/suricata-7.0/emerging-all.rules","rule_format":"suricata","enabled":false,"auto_update":true,"update_interval_hours":24,"last_updated":null,"rule_count":0,"last_error":null}'),
         strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
        ('a0000000-0000-0000-0000-000000000002', 'ids_ruleset', 1,
         json('{"name":"Abuse.ch SSLBL","source_url":"https://sslbl.abuse.ch/blacklist/sslblacklist.rules","rule_format":"suricata","enabled":false,"auto_update":true,"update_interval_hours":24,"last_updated":null,"rule_count":0,"last_error":null}'),
         strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
    `,
  },
  {
    version: 31,
    name: 'AI analysis audit log',
    sql: `
      CREATE TABLE ai_audit_log (
        id              TEXT PRIMARY KEY,
        created_at      TEXT NOT NULL,
        kind            TEXT NOT NULL,
        alert_id        TEXT,
        signature_id    INTEGER,
        signature_msg   TEXT NOT NULL,
        provider        TEXT NOT NULL,
        model           TEXT NOT NULL,
        prompt_preview  TEXT NOT NULL,
        response        TEXT NOT NULL,
        classification  TEXT,
        duration_ms     INTEGER,
        actor           TEXT
      );
      CREATE INDEX ai_audit_log_created ON ai_audit_log (created_at);
    `,
  },
  {
    version: 32,
    name: 'multi-WAN gateway health, events and SLA samples',
    sql: `
      CREATE TABLE multiwan_gateway_health (
        gateway_id      TEXT PRIMARY KEY,
        state           TEXT NOT NULL DEFAULT 'unknown',
        consec_ok       INTEGER NOT NULL DEFAULT 0,
        consec_fail     INTEGER NOT NULL DEFAULT 0,
        rtts            TEXT NOT NULL DEFAULT '[]',
        last_rtt_ms     REAL,
        last_jitter_ms  REAL,
        last_loss_pct   REAL,
        last_mos        REAL,
        last_probe_ts   TEXT
      );
      CREATE TABLE multiwan_gateway_events (
        id                  INTEGER PRIMARY KEY AUTOINCREMENT,
        gateway_id          TEXT NOT NULL,
        ts                  TEXT NOT NULL,
        from_state          TEXT,
        to_state            TEXT NOT NULL,
        reason              TEXT,
        probe_snapshot_json TEXT
      );
      CREATE INDEX multiwan_gateway_events_gw ON multiwan_gateway_events (gateway_id, id);

      INSERT INTO config_objects (id, kind, position, data, created_at, updated_at) VALUES
        ('61696677-0000-0000-0000-000000000000', 'mw_instance', 0,
         json('{"name":"default","fib_number":0,"description":"Default routing instance (FIB 0)","mgmt_reachable":true,"status":"active"}'),
         strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
      CREATE TABLE multiwan_sla_samples (
        gateway_id  TEXT NOT NULL,
        bucket_ts   TEXT NOT NULL,
        samples     INTEGER NOT NULL DEFAULT 0,
        rtts        TEXT NOT NULL DEFAULT '[]',
        jitter_sum  REAL NOT NULL DEFAULT 0,
        failures    INTEGER NOT NULL DEFAULT 0,
        mos_sum     REAL NOT NULL DEFAULT 0,
        mos_count   INTEGER NOT NULL DEFAULT 0,
        up_samples  INTEGER NOT NULL DEFAULT 0,
        interval_ms INTEGER NOT NULL DEFAULT 1000,
        PRIMARY KEY (gateway_id, bucket_ts)
      );
    `,
  },
];

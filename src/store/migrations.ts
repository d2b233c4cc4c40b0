import { AREAS_B_MIGRATIONS } from './migrations-areas-b.js';

/**
 * Numbered schema migrations. Append only: a migration that has shipped is never edited.
 * Configuration lives in config_objects (one versionable document); everything else is operational data.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'configuration store and operational tables',
    sql: `
      CREATE TABLE config_objects (
        id          TEXT PRIMARY KEY,
        kind        TEXT NOT NULL,
        position    INTEGER NOT NULL,
        data        TEXT NOT NULL CHECK (json_valid(data)),
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      );
      CREATE INDEX config_objects_kind_position ON config_objects (kind, position);

      CREATE TABLE audit_log (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        at          TEXT NOT NULL,
        category    TEXT NOT NULL,
        action      TEXT NOT NULL,
        actor       TEXT,
        client_ip   TEXT,
        outcome     TEXT NOT NULL,
        details     TEXT
      );
      CREATE INDEX audit_log_category_id ON audit_log (category, id);

      CREATE TABLE system_log (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        at          TEXT NOT NULL,
        source      TEXT NOT NULL,
        level       TEXT NOT NULL,
        message     TEXT NOT NULL
      );

      CREATE TABLE events (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        at          TEXT NOT NULL,
        stream      TEXT NOT NULL,
        subject     TEXT,
        payload     TEXT NOT NULL CHECK (json_valid(payload))
      );
      CREATE INDEX events_stream_subject ON events (stream, subject, id);

      CREATE TABLE metric_samples (
        series      TEXT NOT NULL,
        resolution  INTEGER NOT NULL,
        t           INTEGER NOT NULL,
        v           REAL NOT NULL,
        PRIMARY KEY (series, resolution, t)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    name: 'identities: roles, users, sessions, refresh tokens, API keys, recovery codes',
    sql: `
      CREATE TABLE roles (
        id          TEXT PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE COLLATE NOCASE,
        permissions TEXT NOT NULL CHECK (json_valid(permissions)),
        description TEXT,
        builtin     INTEGER NOT NULL DEFAULT 0,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      );
      CREATE TABLE users (
        id            TEXT PRIMARY KEY,
        username      TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT,
        email         TEXT,
        role_id       TEXT NOT NULL REFERENCES roles (id),
        auth_provider TEXT NOT NULL DEFAULT 'local',
        enabled       INTEGER NOT NULL DEFAULT 1,
        totp_secret   TEXT,
        totp_pending  TEXT,
        totp_enabled  INTEGER NOT NULL DEFAULT 0,
        totp_last_step INTEGER NOT NULL DEFAULT 0,
        created_at    TEXT NOT NULL,
        updated_at    TEXT NOT NULL
      );
      CREATE TABLE sessions (
        id          TEXT PRIMARY KEY,
        user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        generation  INTEGER NOT NULL DEFAULT 0,
        created_at  TEXT NOT NULL,
        expires_at  INTEGER NOT NULL,
        revoked_at  TEXT,
        client_ip   TEXT
      );
      CREATE INDEX sessions_user ON sessions (user_id);
      CREATE TABLE refresh_tokens (
        token_hash  TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        created_at  TEXT NOT NULL,
        expires_at  INTEGER NOT NULL,
        used_at     TEXT
      );
      CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);
      CREATE TABLE api_keys (
        id           TEXT PRIMARY KEY,
        name         TEXT NOT NULL UNIQUE COLLATE NOCASE,
        prefix       TEXT NOT NULL,
        key_hash     TEXT NOT NULL UNIQUE,
        permissions  TEXT NOT NULL CHECK (json_valid(permissions)),
        owner_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        created_by   TEXT,
        created_at   TEXT NOT NULL,
        expires_at   TEXT,
        last_used_at TEXT
      );
      CREATE TABLE recovery_codes (
        code_hash   TEXT PRIMARY KEY,
        user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        used_at     TEXT
      );
    `,
  },
  {
    version: 10,
    name: 'packet filter: the last applied configuration',
    sql: `
      CREATE TABLE pf_applied (
        id          INTEGER PRIMARY KEY CHECK (id = 1),
        applied_at  TEXT NOT NULL,
        dialect     TEXT NOT NULL,
        snapshot    TEXT NOT NULL CHECK (json_valid(snapshot)),
        ruleset     TEXT NOT NULL
      );
    `,
  },
  {
    version: 20,
    name: 'areas A: service state, blocklist status, update history',
    sql: `
      CREATE TABLE service_state (
        name        TEXT PRIMARY KEY,
        data        TEXT NOT NULL CHECK (json_valid(data)),
        updated_at  TEXT NOT NULL
      );

      CREATE TABLE dns_blocklist_status (
        source_id     TEXT PRIMARY KEY,
        last_updated  INTEGER,
        last_sha256   TEXT,
        rule_count    INTEGER NOT NULL DEFAULT 0,
        bytes         INTEGER NOT NULL DEFAULT 0,
        last_error    TEXT
      );

      CREATE TABLE update_history (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        action      TEXT NOT NULL,
        details     TEXT NOT NULL,
        status      TEXT NOT NULL,
        created_at  TEXT NOT NULL
      );
    `,
  },
  {
    version: 40,
    name: 'single sign-on: links of (provider, subject) to local accounts',
    sql: `
      CREATE TABLE oauth_identities (
        provider_id   TEXT NOT NULL,
        subject       TEXT NOT NULL,
        user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        email         TEXT,
        created_at    TEXT NOT NULL,
        last_login_at TEXT,
        PRIMARY KEY (provider_id, subject)
      );
      CREATE INDEX oauth_identities_user ON oauth_identities (user_id);
      `,
    },
    {
    version: 50,
    name: 'configuration versions, their deduplicated contents, and lifecycle state',
    sql: `
      CREATE TABLE config_contents (
        hash          TEXT PRIMARY KEY,
        object_count  INTEGER NOT NULL,
        content       BLOB NOT NULL
      );
      CREATE TABLE config_versions (
        version        INTEGER PRIMARY KEY AUTOINCREMENT,
        created_at     TEXT NOT NULL,
        created_by     TEXT NOT NULL,
        comment        TEXT,
        source         TEXT NOT NULL,
        hash           TEXT NOT NULL REFERENCES config_contents (hash),
        applied        INTEGER NOT NULL DEFAULT 0,
        applied_at     TEXT,
        rolled_back    INTEGER NOT NULL DEFAULT 0,
        resource_count INTEGER NOT NULL
      );
      CREATE INDEX config_versions_hash ON config_versions (hash);
      CREATE TABLE config_meta (
        key    TEXT PRIMARY KEY,
        value  TEXT NOT NULL CHECK (json_valid(value))
      );
    `,
  },
  ...AREAS_B_MIGRATIONS,
  {
    version: 60,
    name: 'dashboard metrics: aggregated points per series and tier (mean, min, max)',
    sql: `
      CREATE TABLE metric_points (
        series      TEXT NOT NULL,
        tier        TEXT NOT NULL,
        t           INTEGER NOT NULL,
        v           REAL NOT NULL,
        min         REAL NOT NULL,
        max         REAL NOT NULL,
        PRIMARY KEY (series, tier, t)
      ) WITHOUT ROWID;
      CREATE INDEX metric_points_tier_t ON metric_points (tier, t);
    `,
  },
  {
    // Numbered after its issue (19) so parallel branches adding migrations do not collide.
    version: 191,
    name: 'configuration versions: a content may be stored as the change from another (its base)',
    sql: `
      ALTER TABLE config_contents ADD COLUMN base_hash TEXT REFERENCES config_contents (hash);
      ALTER TABLE config_contents ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX config_contents_base ON config_contents (base_hash);
    `,
  },
  {
    version: 192,
    name: 'packet filter: the last applied objects one row each (a small change rewrites a few rows, not megabytes)',
    sql: `
      CREATE TABLE pf_applied_objects (
        kind      TEXT NOT NULL,
        id        TEXT NOT NULL,
        position  INTEGER NOT NULL,
        data      TEXT NOT NULL,
        PRIMARY KEY (kind, id)
      ) WITHOUT ROWID;
    `,
  },
];

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
  ...AREAS_B_MIGRATIONS,
];

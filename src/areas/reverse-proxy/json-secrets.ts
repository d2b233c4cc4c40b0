/**
 * Secrets written inside a middleware's `config_json`: the password hashes of basicAuth and digestAuth users
 * and the values of headers added to requests (`customRequestHeaders`, where upstream tokens go). They are
 * write-only like every other secret: on write they move out of `config_json` into the write-only field
 * `config_secrets` (sealed at rest, never serialised, redacted or passphrase-wrapped in exports), and
 * `config_json` keeps `**REDACTED**` in their place — `alice:**REDACTED**` for a user, so names stay readable.
 * A client that echoes a record back keeps the stored secret wherever it sends the placeholder.
 * Response headers are not secret (every visitor receives them) and stay in `config_json`.
 */
import { badRequest } from '../../core/errors.js';
import { REDACTED } from '../config/secrets.js';

/** The secrets of one middleware: `users:<name>` → the whole `name:hash` entry, `header:<name>` → its value. */
export type SecretMap = Record<string, string>;
export const SECRETS_FIELD = 'config_secrets';

const USER_LIST_TYPES = new Set(['basicAuth', 'digestAuth']);
const userKey = (name: string) => `users:${name}`;
const headerKey = (name: string) => `header:${name.toLowerCase()}`;

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * Walks the secret positions of a middleware's configuration. `visit` gets each value and its key, and returns
 * what to put there; the walk answers the rewritten copy.
 */
function mapSecretValues(type: string, config: JsonObject, visit: (value: string, key: string, where: string) => string): JsonObject {
  const copy: JsonObject = { ...config };
  if (USER_LIST_TYPES.has(type) && Array.isArray(config.users)) {
    copy.users = config.users.map((entry, index) => {
      if (typeof entry !== 'string') return entry;
      const colon = entry.indexOf(':');
      if (colon <= 0) throw badRequest(`body.config_json users[${index}] must be name:hash`);
      return visit(entry, userKey(entry.slice(0, colon)), `users[${index}]`);
    });
  }
  if (type === 'headers' && isObject(config.customRequestHeaders)) {
    copy.customRequestHeaders = Object.fromEntries(Object.entries(config.customRequestHeaders).map(([name, value]) => {
      // An empty value deletes the header: nothing secret in it.
      if (typeof value !== 'string' || value === '') return [name, value];
      return [name, visit(value, headerKey(name), `customRequestHeaders.${name}`)];
    }));
  }
  return copy;
}

/** What stands for a secret in `config_json`: `name:**REDACTED**` for a user, `**REDACTED**` for a header. */
const placeholderOf = (key: string): string => (key.startsWith('users:') ? `${key.slice('users:'.length)}:${REDACTED}` : REDACTED);
const isPlaceholder = (value: string, key: string) => value === placeholderOf(key);

/**
 * Splits a written configuration into what `config_json` may show and the secrets (placeholders resolved from
 * `stored`, the object's secrets so far; 400 when a placeholder names none).
 */
export function splitSecrets(type: string, config: JsonObject, stored: SecretMap): { shown: JsonObject; secrets: SecretMap } {
  const secrets: SecretMap = {};
  const shown = mapSecretValues(type, config, (value, key, where) => {
    if (isPlaceholder(value, key)) {
      const kept = stored[key];
      if (kept === undefined) throw badRequest(`body.config_json ${where}: no secret is stored for it; send the value itself`);
      secrets[key] = kept;
    } else {
      secrets[key] = value;
    }
    return placeholderOf(key);
  });
  return { shown, secrets };
}

/** The configuration as the proxy needs it: every placeholder replaced by its secret (a missing one stays). */
export function joinSecrets(type: string, config: JsonObject, secrets: SecretMap): JsonObject {
  return mapSecretValues(type, config, (value, key) => (isPlaceholder(value, key) && secrets[key] !== undefined ? secrets[key] : value));
}

/** Where a stored `config_json` still holds a secret itself (a value that is not a placeholder), or null. */
export function rawSecretIn(type: string, config: JsonObject): string | null {
  let found: string | null = null;
  mapSecretValues(type, config, (value, key, where) => {
    if (found === null && !isPlaceholder(value, key)) found = where;
    return value;
  });
  return found;
}

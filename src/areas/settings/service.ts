import { existsSync, readFileSync } from 'node:fs';
import type { AppContext } from '../../context.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { badRequest } from '../../core/errors.js';
import { parseTrustedProxies, StartupError } from '../../config.js';
import type { ConfigData } from '../../store/config-store.js';
import { resolve, sep } from 'node:path';

export const SECTION_NAME = '^[a-z][a-z0-9_-]{0,63}$';
export const sectionKind = (section: string) => `settings.${section}`;

/** A path inside the data directory (absolute, or relative to it) that names a readable PEM file of the expected kind. */
export function validatePemPath(dataDir: string, value: string, field: string, label: RegExp): void {
  if (!value) return;
  const root = resolve(dataDir);
  const path = resolve(root, value);
  if (!path.startsWith(`${root}${sep}`)) throw badRequest(`body.${field} must be a path inside the data directory (${root})`);
  if (!existsSync(path)) throw badRequest(`body.${field}: ${value} does not exist`);
  if (!label.test(readFileSync(path, 'utf8').slice(0, 65536))) throw badRequest(`body.${field}: ${value} is not a PEM file of the expected kind`);
}

/** Generic sections store every value as text (the reference's key/value store); objects are refused. */
export function sectionValues(body: ConfigData, section: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(body)) {
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(key)) throw badRequest(`body.${key}: keys are lower-case letters, digits and _`);
    if (value !== null && typeof value === 'object') throw badRequest(`body.${key} must be a string, number or boolean`);
    const text = value === null ? '' : String(value);
    if (text.length > 8192) throw badRequest(`body.${key} must be at most 8192 characters`);
    values[key] = text;
  }
  if (section === 'api_server') {
    if (values.trusted_proxies !== undefined) {
      try {
        parseTrustedProxies(values.trusted_proxies);
      } catch (error) {
        if (error instanceof StartupError) throw badRequest(`body.trusted_proxies: ${error.message.replace(/^--trusted-proxies: /, '')}`);
        throw error;
      }
    }
    if (values.port !== undefined && !(/^\d{1,5}$/.test(values.port) && Number(values.port) >= 1 && Number(values.port) <= 65535)) {
      throw badRequest('body.port must be a port number');
    }
  }
  return values;
}

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

export function clampIdsAlerts(body: { max_mb?: number; max_age_secs?: number }): ConfigData {
  return {
    ...(body.max_mb !== undefined ? { max_mb: clamp(body.max_mb, 8, 512) } : {}),
    ...(body.max_age_secs !== undefined ? { max_age_secs: clamp(body.max_age_secs, 3600, 604800) } : {}),
  };
}

/** The api_server section's trusted proxies, read at startup when no flag or variable sets them. */
export function storedTrustedProxies(context: Pick<AppContext, 'store'>): string[] {
  const section = context.store.getSingleton(sectionKind('api_server'));
  const value = typeof section?.trusted_proxies === 'string' ? section.trusted_proxies : '';
  try {
    return parseTrustedProxies(value);
  } catch {
    return [];
  }
}

export type { SingletonModel };

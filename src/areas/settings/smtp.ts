import { isIP } from 'node:net';
import nodemailer from 'nodemailer';
import { badRequest, HttpError } from '../../core/errors.js';
import type { ConfigData } from '../../store/config-store.js';
import { SMTP_EVENTS } from './schema.js';
import { hasHeaderControl, HOST_PATTERN, replaceControls } from '../../net/header-text.js';
import { resolveGuardedHost } from '../../net/guarded-host.js';

export const SMTP_DEFAULTS = {
  enabled: false,
  host: '',
  port: 587,
  tls: 'starttls',
  username: null as string | null,
  password: '',
  from_address: 'bulwark@localhost',
  recipients: '',
  enabled_events: ['s3_upload_failed', 'restore_failed', 'cert_renew_failed', 'cert_expiring_soon'],
  allowed_addresses: [] as string[],
};

/** `tls`, `implicittls` and `implicit` mean implicit TLS; `none` means none; anything else STARTTLS. */
export function normaliseTls(value: unknown): 'none' | 'starttls' | 'implicit' {
  const text = String(value ?? '').toLowerCase();
  if (text === 'none') return 'none';
  if (['implicit', 'tls', 'implicittls'].includes(text)) return 'implicit';
  return 'starttls';
}

/** Applies a PUT body to the stored settings (password: absent/null keeps, "" clears). */
export function mergeSmtp(current: ConfigData, body: ConfigData): ConfigData {
  const next: ConfigData = { ...current };
  for (const [key, value] of Object.entries(body)) {
    if (key === 'password') {
      if (value === null || value === undefined) continue;
      next.password = value;
    } else if (key === 'tls') next.tls = normaliseTls(value);
    else if (key === 'from_address') next.from_address = String(value).trim() || SMTP_DEFAULTS.from_address;
    else if (key === 'enabled_events') next.enabled_events = (value as string[]).filter((e) => (SMTP_EVENTS as readonly string[]).includes(e));
    else next[key] = value;
  }
  if (next.enabled && (!String(next.host ?? '').trim() || !String(next.recipients ?? '').trim())) {
    throw badRequest('body.host and body.recipients are required when SMTP notifications are enabled');
  }
  validateSmtp(next);
  return next;
}

/** What a stored or draft SMTP configuration must satisfy: nothing in it can end a header or an SMTP command. */
export function validateSmtp(settings: ConfigData): void {
  for (const address of [String(settings.from_address ?? SMTP_DEFAULTS.from_address), ...recipientsOf(settings)]) {
    if (!EMAIL.test(address)) throw badRequest(`body.from_address/recipients: "${replaceControls(address, '?')}" is not an e-mail address`);
  }
  if (settings.username !== null && settings.username !== undefined && hasHeaderControl(String(settings.username))) {
    throw badRequest('body.username must not contain control characters (CR, LF, NUL)');
  }
  if (!new RegExp(HOST_PATTERN).test(String(settings.host ?? ''))) throw badRequest('body.host must be a host name or IP address');
}

/** local@domain without spaces, angle brackets, quotes or control characters. */
const EMAIL = /^[^\s@<>"(),;:\\\u0000-\u001f\u007f]+@[^\s@<>"(),;:\\\u0000-\u001f\u007f]+$/;

export const recipientsOf = (settings: ConfigData) => String(settings.recipients ?? '').split(',').map((s) => s.trim()).filter(Boolean);

/** Sends one test e-mail with nodemailer; 400 when not configured, 502 when the server refuses. */
export async function sendTestMail(settings: ConfigData, password: string | undefined): Promise<{ ok: true; message: string }> {
  try {
    await sendMail(settings, password, {
      subject: 'Bulwark test notification',
      text: 'This is a test e-mail from your Bulwark appliance. Notifications are delivered.',
    });
  } catch (error) {
    if (error instanceof HttpError) throw error;
    throw new HttpError(502, `SMTP test failed: ${(error as Error).message}`);
  }
  return { ok: true, message: 'test email sent' };
}

/**
 * Sends one e-mail to the configured recipients with nodemailer (test mails and notifications): 400 when not
 * configured or refused by the outbound guard; the server's refusal is thrown as it came.
 */
export async function sendMail(settings: ConfigData, password: string | undefined, mail: { subject: string; text: string }): Promise<void> {
  const host = String(settings.host ?? '').trim();
  const recipients = recipientsOf(settings);
  if (!host) throw badRequest('SMTP is not configured: set host (and recipients) first');
  if (recipients.length === 0) throw badRequest('SMTP is not configured: no recipients');
  validateSmtp(settings);
  const tls = normaliseTls(settings.tls);
  // Connect to the address the guard checked; TLS still verifies the certificate against the name.
  const { address } = await resolveGuardedHost(host, (settings.allowed_addresses as string[] | undefined) ?? []);
  const transport = nodemailer.createTransport({
    host: address,
    ...(isIP(host) ? {} : { tls: { servername: host } }),
    port: Number(settings.port ?? 587),
    secure: tls === 'implicit',
    requireTLS: tls === 'starttls',
    ignoreTLS: tls === 'none',
    auth: settings.username ? { user: String(settings.username), pass: password ?? '' } : undefined,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 15_000,
  });
  try {
    // Subjects come from event payloads: no control character may end the header.
    await transport.sendMail({ from: String(settings.from_address), to: recipients, subject: replaceControls(mail.subject, ' '), text: mail.text });
  } finally {
    transport.close();
  }
}

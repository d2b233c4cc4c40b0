/**
 * Caddy writes its access log as JSON; the model offers the common and combined formats as well. This turns
 * one Caddy entry into the chosen format. Values come from requests (hostile clients): every field is printable
 * ASCII only, and quoted fields have their quotes and backslashes escaped, so one request is always one line.
 */
interface CaddyAccessEntry {
  ts?: number;
  user_id?: string;
  status?: number;
  size?: number;
  request?: { remote_ip?: string; method?: string; uri?: string; proto?: string; host?: string; headers?: Record<string, string[]> };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const printable = (value: unknown) => String(value ?? '').replace(/[^\x20-\x7e]/g, '?');
const quoted = (value: unknown) => `"${printable(value).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
const token = (value: unknown) => printable(value).replace(/\s/g, '') || '-';

/** `[24/Nov/2026:04:16:05 +0000]` */
function clfTime(seconds: number): string {
  const date = new Date(seconds * 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `[${pad(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000]`;
}

export function formatAccessLine(line: string, format: 'common' | 'clf' | 'combined' | 'json'): string {
  let entry: CaddyAccessEntry;
  try {
    entry = JSON.parse(line) as CaddyAccessEntry;
  } catch {
    return printable(line);
  }
  if (format === 'json') return printable(line);
  const request = entry.request ?? {};
  const common = `${token(request.remote_ip)} - ${token(entry.user_id)} ${clfTime(entry.ts ?? 0)} ${quoted(`${request.method ?? ''} ${request.uri ?? ''} ${request.proto ?? ''}`)} ${Number(entry.status) || 0} ${Number(entry.size) || 0}`;
  if (format !== 'combined') return common;
  const header = (name: string) => request.headers?.[name]?.[0] ?? '-';
  return `${common} ${quoted(header('Referer'))} ${quoted(header('User-Agent'))}`;
}

/** Display helpers: the console never shows `undefined` or `[object Object]`. */

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export function formatValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string' && ISO_TIME.test(value)) return formatTime(value);
  if (Array.isArray(value)) return value.length === 0 ? '—' : value.map((item) => formatValue(item)).join(', ');
  if (typeof value === 'object') {
    const range = value as { start?: unknown; end?: unknown };
    if (typeof range.start === 'number' && typeof range.end === 'number') return range.start === range.end ? String(range.start) : `${range.start}–${range.end}`;
    return JSON.stringify(value);
  }
  return String(value);
}

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function formatBytes(bytes: number | null | undefined): string {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '—';
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${BYTE_UNITS[unit]}`;
}

export function formatBitRate(bitsPerSecond: number | null | undefined): string {
  if (typeof bitsPerSecond !== 'number' || !Number.isFinite(bitsPerSecond)) return '—';
  const units = ['bit/s', 'kbit/s', 'Mbit/s', 'Gbit/s', 'Tbit/s'];
  let value = bitsPerSecond;
  let unit = 0;
  while (Math.abs(value) >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

export function formatCount(value: number | null | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toLocaleString('en') : '—';
}

export function formatTime(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString('en-GB', { dateStyle: 'short', timeStyle: 'medium' });
}

export function formatDuration(seconds: number | null | undefined): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '—';
  const whole = Math.max(0, Math.round(seconds));
  const days = Math.floor(whole / 86400);
  const hours = Math.floor((whole % 86400) / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = whole % 60;
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${minutes} min`;
  return minutes > 0 ? `${minutes} min ${rest} s` : `${rest} s`;
}

/** A port or range as the API's text input takes it back: `443` or `8000-8080` (empty when none). */
export function portText(value: unknown): string {
  if (typeof value === 'number') return String(value);
  const range = value as { start?: number; end?: number } | null | undefined;
  if (typeof range?.start !== 'number') return '';
  return range.start === range.end || range.end === undefined ? String(range.start) : `${range.start}-${range.end}`;
}

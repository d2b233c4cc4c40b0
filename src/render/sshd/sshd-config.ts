import { renderRefused } from '../refusal.js';

/** The sshd_config keywords Bulwark writes, each with the grammar of its value. Match, Include and the rest cannot be written. */
const GRAMMAR = {
  Port: (value: string) => /^[1-9]\d{0,4}$/.test(value) && Number(value) <= 65535,
  PasswordAuthentication: (value: string) => value === 'yes' || value === 'no',
  PermitRootLogin: (value: string) => value === 'yes' || value === 'no' || value === 'prohibit-password',
} as const;

export type SshdKeyword = keyof typeof GRAMMAR;

/** `Keyword value`, or a 409 naming `field` when the value does not fit. */
export function sshdLine(keyword: SshdKeyword, value: string | number, field: string): string {
  const text = String(value);
  if (!GRAMMAR[keyword](text)) throw renderRefused('sshd configuration', field, `not a valid ${keyword} value`);
  return `${keyword} ${text}`;
}

/**
 * The resolver's `custom_options`: an explicit allow-list of harmless server-clause directives, parsed line by
 * line and token by token. Each line is `keyword: value` with one value of the directive's kind (yes/no, a
 * number, a size). Anything else (a second keyword, quotes, a clause opener, a directive that names a file,
 * drops privileges, loads code or opens control) is refused. Validation and rendering use this one parser, so
 * the rendered lines are rebuilt from checked tokens, never copied from the text.
 */
export type OptionKind = 'yesno' | 'number' | 'size';

const YES_NO = [
  'harden-glue', 'harden-dnssec-stripped', 'harden-below-nxdomain', 'harden-referral-path', 'harden-algo-downgrade',
  'harden-short-bufsize', 'harden-large-queries', 'use-caps-for-id', 'aggressive-nsec', 'serve-expired',
  'minimal-responses', 'rrset-roundrobin', 'qname-minimisation-strict', 'deny-any', 'edns-tcp-keepalive', 'do-ip4',
  'do-ip6', 'do-udp', 'do-tcp', 'prefer-ip4', 'prefer-ip6', 'so-reuseport', 'val-clean-additional',
  'val-permissive-mode', 'ignore-cd-flag', 'log-servfail', 'log-local-actions', 'statistics-cumulative',
  'extended-statistics', 'hide-trustanchor', 'infra-keep-probing', 'ede', 'ede-serve-expired',
];
const NUMBERS = [
  'edns-buffer-size', 'max-udp-size', 'outgoing-range', 'outgoing-num-tcp', 'incoming-num-tcp', 'num-queries-per-thread',
  'jostle-timeout', 'cache-max-negative-ttl', 'infra-cache-numhosts', 'infra-cache-min-rtt', 'serve-expired-ttl',
  'serve-expired-reply-ttl', 'serve-expired-client-timeout', 'val-bogus-ttl', 'val-log-level', 'tcp-idle-timeout',
  'edns-tcp-keepalive-timeout', 'ratelimit', 'ip-ratelimit', 'msg-cache-slabs', 'rrset-cache-slabs', 'key-cache-slabs',
  'infra-cache-slabs', 'ratelimit-slabs', 'ip-ratelimit-slabs', 'delay-close', 'unknown-server-time-limit',
  'statistics-interval',
];
const SIZES = ['key-cache-size', 'neg-cache-size', 'so-rcvbuf', 'so-sndbuf', 'stream-wait-size'];

/** Every directive custom_options may set, and the kind of its one value. */
export const ALLOWED_CUSTOM_OPTIONS: ReadonlyMap<string, OptionKind> = new Map<string, OptionKind>([
  ...YES_NO.map((k) => [k, 'yesno'] as const),
  ...NUMBERS.map((k) => [k, 'number'] as const),
  ...SIZES.map((k) => [k, 'size'] as const),
]);

const VALUE: Record<OptionKind, { pattern: RegExp; what: string }> = {
  yesno: { pattern: /^(yes|no)$/, what: 'yes or no' },
  number: { pattern: /^\d{1,10}$/, what: 'a whole number' },
  size: { pattern: /^\d{1,12}[kmgKMG]?$/, what: 'a size such as 4m' },
};

/** Named in the refusal so the reason is plain; every other unknown keyword is refused as "not allowed" too. */
const MANAGED_OR_DANGEROUS = /^(include|include-toplevel|directory|chroot|username|module-config|python-.*|dynlib-.*|remote-control|control-.*|.*-file|pidfile|logfile|.*-cert.*|.*-key.*|tls-.*|server|forward-zone|stub-zone|auth-zone|view|rpz|python|dynlib|cachedb|dnscrypt|ipset|dnstap.*)$/;

export interface CustomOption {
  keyword: string;
  value: string;
  /** 1-based line of the text the option came from. */
  line: number;
}

export class CustomOptionError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

/** Parses custom_options; throws CustomOptionError naming the first refused line. */
export function parseCustomOptions(text: string): CustomOption[] {
  const options: CustomOption[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    if (/[^\t\x20-\x7e]/.test(raw)) throw new CustomOptionError(line, 'only printable characters are allowed (no CR, NUL or other control characters)');
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    if (/["']/.test(trimmed)) throw new CustomOptionError(line, 'quotes are not allowed');
    if (/[\\#{};]/.test(trimmed)) throw new CustomOptionError(line, 'only keyword: value is allowed (no \\, #, braces or semicolons)');
    const keywords = trimmed.match(/[A-Za-z0-9_-]+:/g) ?? [];
    if (keywords.length > 1) throw new CustomOptionError(line, 'only one keyword per line is allowed');
    const match = /^([A-Za-z0-9_-]+):(?:[ \t]+(\S+))?$/.exec(trimmed);
    if (!match) throw new CustomOptionError(line, 'must be keyword: value');
    const keyword = match[1].toLowerCase();
    const kind = ALLOWED_CUSTOM_OPTIONS.get(keyword);
    if (!kind) {
      if (match[2] === undefined) throw new CustomOptionError(line, `${keyword}: clause openers are not allowed (options go into the server clause)`);
      const why = MANAGED_OR_DANGEROUS.test(keyword) ? 'is not allowed (it names a file, loads code, opens control or is managed by the appliance)' : 'is not an allowed option';
      throw new CustomOptionError(line, `${keyword} ${why}`);
    }
    const value = match[2];
    if (value === undefined || !VALUE[kind].pattern.test(value)) throw new CustomOptionError(line, `${keyword} must be ${VALUE[kind].what}`);
    options.push({ keyword, value, line });
  });
  return options;
}

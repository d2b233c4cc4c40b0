/**
 * Suricata rule syntax: `[#]action proto src sport dir dst dport (opt: value; opt; ...)`. A commented line that
 * is a complete rule is a rule shipped disabled (as ET Open does); other comments are skipped.
 */
export interface ParsedRule {
  action: string;
  sid: number | null;
  gid: number;
  rev: number | null;
  msg: string | null;
  classtype: string | null;
  /** 1 critical … 4 info: `priority:` when given, else the classtype's priority, else 3. */
  severity: number;
  enabled: boolean;
  rule_text: string;
  metadata: Record<string, string>;
}

const ACTIONS = new Set(['alert', 'drop', 'reject', 'rejectsrc', 'rejectdst', 'rejectboth', 'pass', 'config']);
const HEADER = /^(alert|drop|reject|rejectsrc|rejectdst|rejectboth|pass|config)\s+\S+(\s+\S+\s+\S+\s+(->|<>)\s+\S+\s+\S+)?\s*\(/;

/** Priorities of Suricata's standard classification.config. */
const CLASSTYPE_PRIORITY: Record<string, number> = {
  'not-suspicious': 3, unknown: 3, 'bad-unknown': 2, 'attempted-recon': 2, 'successful-recon-limited': 2,
  'successful-recon-largescale': 2, 'attempted-dos': 2, 'successful-dos': 2, 'attempted-user': 1, 'unsuccessful-user': 1,
  'successful-user': 1, 'attempted-admin': 1, 'successful-admin': 1, 'rpc-portmap-decode': 2, 'shellcode-detect': 1,
  'string-detect': 3, 'suspicious-filename-detect': 2, 'suspicious-login': 2, 'system-call-detect': 2, 'tcp-connection': 4,
  'trojan-activity': 1, 'unusual-client-port-connection': 2, 'network-scan': 3, 'denial-of-service': 2,
  'non-standard-protocol': 2, 'protocol-command-decode': 3, 'web-application-activity': 2, 'web-application-attack': 1,
  'misc-activity': 3, 'misc-attack': 2, 'icmp-event': 3, 'inappropriate-content': 1, 'policy-violation': 1,
  'default-login-attempt': 2, 'targeted-activity': 1, 'exploit-kit': 1, 'external-ip-check': 2, 'domain-c2': 1,
  'pup-activity': 2, 'credential-theft': 1, 'social-engineering': 2, 'coin-mining': 2, 'command-and-control': 1,
};

/** Splits the option body on `;` outside quotes, honouring backslash escapes. */
export function splitOptions(body: string): [string, string | null][] {
  const options: [string, string | null][] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i];
    if (ch === '\\' && i + 1 < body.length) {
      current += ch + body[++i];
      continue;
    }
    if (ch === '"') quoted = !quoted;
    if (ch === ';' && !quoted) {
      pushOption(options, current);
      current = '';
      continue;
    }
    current += ch;
  }
  pushOption(options, current);
  return options;
}

function pushOption(options: [string, string | null][], text: string): void {
  const trimmed = text.trim();
  if (!trimmed) return;
  const colon = trimmed.indexOf(':');
  if (colon < 0) options.push([trimmed, null]);
  else options.push([trimmed.slice(0, colon).trim(), trimmed.slice(colon + 1).trim()]);
}

const unquote = (value: string) => value.replace(/^"(.*)"$/s, '$1').replace(/\\(.)/g, '$1');

export function parseRuleLine(line: string): ParsedRule | null {
  let text = line.trim();
  let enabled = true;
  if (text.startsWith('#')) {
    text = text.replace(/^#+\s*/, '');
    enabled = false;
  }
  const header = HEADER.exec(text);
  if (!header || !ACTIONS.has(header[1]) || !text.endsWith(')')) return null;
  const body = text.slice(text.indexOf('(') + 1, -1);
  const options = splitOptions(body);
  const value = (name: string) => options.find(([key]) => key === name)?.[1] ?? null;
  const sid = value('sid');
  if (enabled === false && sid === null) return null; // a comment that merely looks like a rule
  const priority = Number(value('priority'));
  const classtype = value('classtype');
  const metadata: Record<string, string> = {};
  for (const [key, raw] of options) {
    if (key === 'metadata' && raw) {
      for (const pair of raw.split(',')) {
        const [k, ...rest] = pair.trim().split(/\s+/);
        if (k) metadata[k] = rest.join(' ');
      }
    }
  }
  if (classtype) metadata.classtype = classtype;
  const reference = options.filter(([key]) => key === 'reference').map(([, v]) => v).filter(Boolean);
  if (reference.length > 0) metadata.reference = reference.join(' ');
  return {
    action: header[1],
    sid: sid !== null && /^\d+$/.test(sid) ? Number(sid) : null,
    gid: Number(value('gid')) || 1,
    rev: value('rev') !== null ? Number(value('rev')) || null : null,
    msg: value('msg') !== null ? unquote(value('msg')!) : null,
    classtype,
    severity: priority >= 1 && priority <= 4 ? priority : priority > 4 ? 4 : (classtype && CLASSTYPE_PRIORITY[classtype]) || 3,
    enabled,
    rule_text: text,
    metadata,
  };
}

/** Every rule of a rules file; blank lines and plain comments are skipped. */
export function parseRulesFile(text: string): ParsedRule[] {
  const rules: ParsedRule[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const rule = parseRuleLine(line);
    if (rule) rules.push(rule);
  }
  return rules;
}

/** Replaces a rule's action word (for action overrides when compiling the engine's rule file). */
export const withAction = (ruleText: string, action: string): string => ruleText.replace(/^\S+/, action);

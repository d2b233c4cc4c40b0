import { isCidr, isSingleLineText } from '../grammar.js';
import { renderRefused } from '../refusal.js';
import { parseRuleLine, splitOptions } from '../../areas/ids/rules-parser.js';

/**
 * Rule keywords that run code or name a file on the appliance: Lua scripts, dataset/datarep files (which
 * `save`/`state` also write), hash lists. Checked on the parsed options and, in case a parser disagrees with
 * Suricata's about quoting, anywhere in the text as `keyword:`.
 */
export const REFUSED_RULE_KEYWORDS = ['lua', 'luajit', 'dataset', 'datarep', 'filemd5', 'filesha1', 'filesha256'] as const;
const REFUSED_ANYWHERE = new RegExp(`(^|[^A-Za-z0-9_.-])(${REFUSED_RULE_KEYWORDS.join('|')})\\s*:`, 'i');

/** Why a rule line cannot be installed or written, or null when it is one well-formed, harmless rule. */
export function suricataRuleProblem(text: string): string | null {
  if (!isSingleLineText(text)) return 'contains a control character (newline, CR, NUL, ...)';
  const rule = parseRuleLine(text);
  if (!rule) return 'is not a Suricata rule';
  const refused = splitOptions(text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')))
    .map(([key]) => key.toLowerCase())
    .find((key) => (REFUSED_RULE_KEYWORDS as readonly string[]).includes(key));
  if (refused) return `the ${refused} keyword is not allowed (it runs a script or names a file)`;
  const hidden = REFUSED_ANYWHERE.exec(text);
  if (hidden) return `the ${hidden[2].toLowerCase()} keyword is not allowed (it runs a script or names a file)`;
  return null;
}

/** The one writer of bulwark.rules lines: a rule that passes suricataRuleProblem, or a 409 naming `field`. */
export function suricataRuleLine(text: string, field: string): string {
  const problem = suricataRuleProblem(text);
  if (problem) throw renderRefused('Suricata rules file', field, problem);
  return text;
}

/** The one writer of threshold.config lines: numbers, a fixed track word and a checked address. */
export function suricataSuppressLine(sid: number, track: 'by_src' | 'by_dst' | 'by_either' | null, ip: string | null, field: string): string {
  if (!Number.isInteger(sid) || sid < 1) throw renderRefused('Suricata threshold file', field, 'sig_id must be a positive integer');
  if (ip === null) return `suppress gen_id 1, sig_id ${sid}`;
  if (!track || !['by_src', 'by_dst', 'by_either'].includes(track) || !isCidr(ip)) throw renderRefused('Suricata threshold file', field, 'not a valid track and address');
  return `suppress gen_id 1, sig_id ${sid}, track ${track}, ip ${ip}`;
}

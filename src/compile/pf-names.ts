/**
 * Which names pf can take as a table name (`<name>`). pfctl's lexer turns a reserved word into its token
 * and an all-digit word into a number, and `-` cannot start a word: `table <all>`, `<123>` or `<-x>` then
 * fail to load (pf.conf(5): reserved words may not be used as table names). The list is the keywords of
 * FreeBSD 14's pf.conf grammar, with a few older ones kept (refusing an extra name is harmless; loading a
 * ruleset that pfctl refuses is not).
 */
const PF_RESERVED_WORDS = new Set(`
all allow-opts altq anchor antispoof any bandwidth binat binat-anchor bitmask block block-policy borrow buckets
cbq code codelq control crop debug default divert-reply divert-to dnpipe dnqueue drop drop-ovl dup-to ecn ether
fail-policy fairq fastroute file fingerprints flags floating flush for fragment from global group hfsc hogs hostid
icmp-type icmp6-type if-bound in include inet inet6 interval keep keepcounters l3 label limit linkshare load log
log-all loginterface map-e-portset match max max-mss max-src-conn max-src-conn-rate max-src-nodes max-src-states
min-ttl modulate nat nat-anchor no no-df no-route no-sync on optimization os out overload pass port prio priority
priq probability proto qlimit queue quick random random-id rdr rdr-anchor realtime reassemble red reply-to
require-order return return-icmp return-icmp6 return-rst ridentifier rio round-robin route route-to rtable rule
ruleset-optimization scrub set set-tos skip sloppy source-hash source-track state state-defaults state-policy
static-port sticky-address syncookies synproxy table tag tagged target tbrsize timeout to tos ttl upperlimit
urpf-failed user
`.trim().split(/\s+/));

/**
 * Why pf cannot read this word as a name (a table, an interface), or undefined when it can. Compared
 * without case, to keep it simple.
 */
export function pfWordProblem(name: string): string | undefined {
  if (PF_RESERVED_WORDS.has(name.toLowerCase())) return `"${name}" is a pf keyword`;
  if (/^\d+$/.test(name)) return `"${name}" is a number`;
  if (name.startsWith('-')) return `"${name}" starts with -`;
  return undefined;
}

/** Interface names both compilers render: a letter first, then up to 14 of A-Z, a-z, 0-9, _, . and -. */
export const INTERFACE_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,14}$/;
export const INTERFACE_NAME_RULE = '1-15 characters of A-Z, a-z, 0-9, _, . and -, starting with a letter';

/** Why this interface name cannot be rendered, or undefined when it can. */
export function interfaceNameProblem(name: string): string | undefined {
  if (!INTERFACE_NAME.test(name)) return `"${name}" is not ${INTERFACE_NAME_RULE}`;
  return pfWordProblem(name);
}

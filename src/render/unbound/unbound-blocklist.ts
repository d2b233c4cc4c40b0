/**
 * Blocking in Unbound: custom blocks, downloaded blocklists and the allow-list are enforced by a small filter
 * running in Unbound's own Python module (`module-config: "python …"`), which reads one data file of names into
 * a hash table. Measured with one million names (bench/dns-blocklist.bench.ts, docs/dns.md): one `local-zone`
 * per name costs Unbound about 430 MB and 8 s to check and load, an RPZ zone about 610 MB and 18 s; the filter
 * about 130 MB and 2 s. Host overrides and the appliance's own zones stay ordinary `local-data`.
 *
 * Pure: names in, text out. Every name is checked against the DNS-name grammar here (the filter's data is
 * one name a field, tab-separated), so nothing but plain host names reaches the file.
 */
import { isIP } from 'node:net';
import { RenderRefusal } from '../refusal.js';

export type BlockAction = 'nxdomain' | 'nodata' | 'drop' | 'redirect';

/** One source of blocked names, in precedence order (the first zone that lists a name owns it). */
export interface BlockZone {
  /** `custom` or `blocklist-<source id>`: named in block events and statistics. */
  label: string;
  action: BlockAction;
  redirectIp: string | null;
  names: readonly string[];
}

/** Lower-case host labels joined by dots, at least two labels (what the blocklist parser produces). */
const NAME = /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)+[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
/** Allow-list entries may be single labels (a domain override such as `lan`). */
const ALLOWED_NAME = /^(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const LABEL = /^[a-z0-9][a-z0-9-]{0,127}$/;
const ACTIONS: ReadonlySet<string> = new Set(['nxdomain', 'nodata', 'drop', 'redirect']);
/** Paths Bulwark builds itself (runtime directory, hex file names). */
const PATH = /^\/[A-Za-z0-9/._-]+$/;

function blockedName(name: string, field: string): string {
  if (name.length > 253 || !NAME.test(name)) throw new RenderRefusal(field, 'is not a DNS name');
  return name;
}

export interface RenderedBlocklist {
  /** The filter's data file: `zone` lines (label, action, redirect address, names), `allow` lines, then `<zone index>\t<name>` lines. */
  data: string;
  /** Names each zone owns after de-duplication and the allow-list (what the filter answers for). */
  counts: { label: string; names: number }[];
}

/**
 * The data file. A name listed by an earlier zone is not repeated; an allow-listed name (or a name under an
 * allow-listed one) is never blocked: the filter checks the query name and each parent, most specific first,
 * and an allow entry stops the walk before any block entry above it.
 */
export function renderBlocklistData(zones: readonly BlockZone[], allow: readonly string[]): RenderedBlocklist {
  const allowed = new Set(allow.map((name, index) => {
    if (name.length > 253 || !ALLOWED_NAME.test(name)) throw new RenderRefusal(`allow.${index}`, 'is not a DNS name');
    return name;
  }));
  const blocked: string[] = [];
  const claimed = new Set<string>();
  const counts = zones.map((zone, index) => {
    if (!LABEL.test(zone.label)) throw new RenderRefusal(`zones.${index}.label`, 'is not a zone label');
    let owned = 0;
    zone.names.forEach((name, position) => {
      const checked = blockedName(name, `zones.${index}.names.${position}`);
      if (claimed.has(checked) || allowed.has(checked)) return;
      claimed.add(checked);
      blocked.push(`${index}\t${checked}`);
      owned++;
    });
    return { label: zone.label, names: owned };
  });
  // Zone lines come first and carry their counts, so a reader of statistics needs only the head of the file.
  const zoneLines = zones.map((zone, index) => {
    if (!ACTIONS.has(zone.action)) throw new RenderRefusal(`zones.${index}.action`, 'is not a block action');
    const redirect = zone.action === 'redirect' ? zone.redirectIp : null;
    if (zone.action === 'redirect' && !(redirect && isIP(redirect))) throw new RenderRefusal(`zones.${index}.redirect_ip`, 'is not an IP address');
    return `zone\t${zone.label}\t${zone.action}\t${redirect ?? '-'}\t${counts[index].names}`;
  });
  const lines = [HEADER, ...zoneLines, ...[...allowed].map((name) => `allow\t${name}`), ...blocked];
  return { data: `${lines.join('\n')}\n`, counts };
}

const HEADER = '# Bulwark blocklist data for the Unbound filter. Rendered by Bulwark; changes here are overwritten.';

/** The zones and their name counts from the head of a data file (what `/dns/stats` reports per zone). */
export function blocklistZonesOf(head: string): { label: string; action: string; names: number }[] {
  const zones: { label: string; action: string; names: number }[] = [];
  for (const line of head.split('\n')) {
    if (line.startsWith('#')) continue;
    const fields = line.split('\t');
    if (fields[0] !== 'zone' || fields.length < 5) break;
    zones.push({ label: fields[1], action: fields[2], names: Number(fields[4]) || 0 });
  }
  return zones;
}

/**
 * The filter script for Unbound's Python module, reading `dataFile`. Answers: `nxdomain` NXDOMAIN, `nodata`
 * NOERROR without records, `redirect` the address for a query of its type (NOERROR without records for other
 * types), `drop` REFUSED (a Python module cannot drop a query). Each block is logged as one
 * `bulwark-block <zone> <action> <client> <name> <type>` line, which Bulwark reads for its event stream.
 */
export function renderBlocklistFilter(dataFile: string): string {
  if (!PATH.test(dataFile)) throw new RenderRefusal('paths.blocklistData', 'is not a plain absolute path');
  return `${FILTER_SCRIPT.replace('@DATA_FILE@', dataFile)}`;
}

const FILTER_SCRIPT = `# Bulwark's blocklist filter for Unbound's Python module. Rendered by Bulwark; changes here are overwritten.
DATA_FILE = '@DATA_FILE@'
ZONES = []
ALLOW = set()
BLOCK = {}


def init_standard(id, env):
    with open(DATA_FILE, encoding='ascii') as data:
        for line in data:
            fields = line.rstrip('\\n').split('\\t')
            if fields[0] == 'zone':
                ZONES.append((fields[1], fields[2], fields[3]))
            elif fields[0] == 'allow':
                ALLOW.add(fields[1])
            elif fields[0].isdigit():
                BLOCK[fields[1]] = int(fields[0])
    log_info('bulwark-blocklist: %d names in %d zones, %d allowed' % (len(BLOCK), len(ZONES), len(ALLOW)))
    return True


def deinit(id):
    return True


def inform_super(id, qstate, superqstate, qdata):
    return True


def verdict(name):
    labels = name.split('.')
    for start in range(len(labels)):
        suffix = '.'.join(labels[start:])
        if suffix in ALLOW:
            return None
        zone = BLOCK.get(suffix)
        if zone is not None:
            return zone
    return None


def client_of(qstate):
    try:
        reply = qstate.mesh_info.reply_list
        return reply.query_reply.addr if reply else '-'
    except Exception:
        return '-'


def answer(qstate, action, redirect):
    qinfo = qstate.qinfo
    msg = DNSMessage(qinfo.qname_str, qinfo.qtype, qinfo.qclass, PKT_QR | PKT_RA | PKT_AA)
    rcode = RCODE_NOERROR
    if action == 'nxdomain':
        rcode = RCODE_NXDOMAIN
    elif action == 'drop':
        rcode = RCODE_REFUSED
    elif action == 'redirect':
        family = RR_TYPE_AAAA if ':' in redirect else RR_TYPE_A
        if qinfo.qtype == family:
            msg.answer.append('%s 300 IN %s %s' % (qinfo.qname_str, 'AAAA' if family == RR_TYPE_AAAA else 'A', redirect))
    if not msg.set_return_msg(qstate):
        return False
    qstate.return_rcode = rcode
    qstate.return_msg.rep.security = 2
    return True


def operate(id, event, qstate, qdata):
    if event in (MODULE_EVENT_NEW, MODULE_EVENT_PASS):
        name = qstate.qinfo.qname_str.rstrip('.').lower()
        zone = verdict(name)
        if zone is None:
            qstate.ext_state[id] = MODULE_WAIT_MODULE
            return True
        label, action, redirect = ZONES[zone]
        if not answer(qstate, action, redirect):
            qstate.ext_state[id] = MODULE_ERROR
            return True
        log_info('bulwark-block %s %s %s %s %s' % (label, action, client_of(qstate), name, qstate.qinfo.qtype_str))
        qstate.ext_state[id] = MODULE_FINISHED
        return True
    if event == MODULE_EVENT_MODDONE:
        qstate.ext_state[id] = MODULE_FINISHED
        return True
    qstate.ext_state[id] = MODULE_ERROR
    return True
`;

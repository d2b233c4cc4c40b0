# Bulwark's blocklist filter for Unbound's Python module. Rendered by Bulwark; changes here are overwritten.
DATA_FILE = '/var/lib/bulwark/dns/blocklists/0123abcd.tsv'
ZONES = []
ALLOW = set()
BLOCK = {}


def init_standard(id, env):
    with open(DATA_FILE, encoding='ascii') as data:
        for line in data:
            fields = line.rstrip('\n').split('\t')
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

/**
 * The topics of the event hub (core/event-hub.ts): everything that happens on the appliance is announced once,
 * here named, and syslog forwarding, notifications and the live streams subscribe. Producers emit the payloads
 * described next to each topic; subscribers read them defensively (a payload is plain JSON).
 */
export const EVENT_TOPICS = {
  /** A packet-filter log line (NFLOG/ulogd): action, rule_id, interface, protocol, src/dst addresses and ports. */
  packetLog: 'packet_filter.log',
  /** A new connection in the state table (linux: conntrack NEW events, at most 100 a second): id, protocol, src/dst addresses and ports, dropped. */
  connectionNew: 'connection.new',
  /** An IDS alert stored from the engine's EVE log: signature_id, signature, severity (1 highest..4), addresses, ports. */
  idsAlert: 'ids.alert',
  /** An audit-trail entry: category, action, outcome, actor, client_ip, object (kind/id), details. */
  audit: 'audit',
  /** A line of the API's own log at or above the logger's level: level, msg, and its fields. */
  appLog: 'app.log',
  /** A line a supervised daemon wrote (stdout/stderr): daemon, line. */
  daemonLog: 'daemon.log',
  /** A supervised daemon died on its own (`crashed`) or came back after a restart (`restarted`): daemon, reason. */
  daemonCrashed: 'daemon.crashed',
  daemonRestarted: 'daemon.restarted',
  /** Unbound's blocklist filter answered a query with a block: client, qname, qtype, action, zone (the blocklist). */
  dnsBlock: 'dns.block',
  /** Kea's run_script hook reported a lease event: event (its hook point), ip_address, mac_address, valid_lifetime, hostname. */
  dhcpLease: 'dhcp.lease',
  /** A multi-WAN gateway changed state: gateway_id, name, from, to, reason. */
  gatewayState: 'gateway.state',
  /** An account or client address got locked out after too many failed logins: key, actor, client_ip. */
  accountLockedOut: 'account.locked_out',
  /** A certificate expires within the warning window (certificate, days_left) or its renewal failed (certificate, error). */
  certificateExpiring: 'certificate.expiring',
  certificateRenewalFailed: 'certificate.renewal_failed',
  /** A newer Bulwark release is published on the update feed: current, latest. */
  updateAvailable: 'update.available',
  /** The data directory's file system is nearly full: path, used_pct, threshold_pct. */
  diskNearlyFull: 'disk.nearly_full',
  /** The kernel ruleset matches the applied one again after drift (drift itself is `config.drift`). */
  driftRepaired: 'config.drift_repaired',
} as const;

export type EventTopic = (typeof EVENT_TOPICS)[keyof typeof EVENT_TOPICS];

/** Syslog severities (RFC 5424 section 6.2.1), the scale every event's severity is given on. */
export const SEVERITIES = ['emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'info', 'debug'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const severityCode = (severity: Severity): number => SEVERITIES.indexOf(severity);

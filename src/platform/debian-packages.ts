/**
 * The Debian package that provides each program or file Bulwark drives, so that a missing one is reported as
 * something an administrator can install (`apt-get install <package>`) rather than as a failure to explain.
 */
export interface MissingTool {
  /** The program (or library file) that was looked for. */
  program: string;
  /** The Debian package that installs it. */
  package: string;
}

const PACKAGES: Record<string, string> = {
  unbound: 'unbound',
  'unbound-checkconf': 'unbound',
  'unbound-control': 'unbound',
  'unboundmodule.py': 'python3-unbound',
  'kea-dhcp4': 'kea-dhcp4-server',
  'libdhcp_lease_cmds.so': 'kea-common',
  'libdhcp_ha.so': 'kea-common',
  'libdhcp_run_script.so': 'kea-common',
  'kea-dhcp-ddns': 'kea-dhcp-ddns-server',
  chronyd: 'chrony',
  chronyc: 'chrony',
  setpriv: 'util-linux',
  ip: 'iproute2',
  nft: 'nftables',
  conntrack: 'conntrack',
  ping: 'iputils-ping',
  dig: 'bind9-dnsutils',
  traceroute: 'traceroute',
  tcpdump: 'tcpdump',
  wg: 'wireguard-tools',
  'wireguard-go': 'wireguard-go',
  'charon-systemd': 'charon-systemd',
  swanctl: 'strongswan-swanctl',
  'libstrongswan-kernel-libipsec.so': 'libcharon-extra-plugins',
  caddy: 'caddy',
  ulogd: 'ulogd2',
  softflowd: 'softflowd',
  nsupdate: 'bind9-dnsutils',
  suricata: 'suricata (not packaged in Debian 12: install it from upstream or backports)',
  'suricata-update': 'suricata-update',
  sshd: 'openssh-server',
  'update-grub': 'grub2-common',
};

/** The package of a program Bulwark drives (the program's own name when it is not in the table). */
export function debianPackageOf(program: string): string {
  return PACKAGES[program] ?? program;
}

export function missingTool(program: string): MissingTool {
  return { program, package: debianPackageOf(program) };
}

/** One sentence for an administrator: what is missing and what to install. */
export function describeMissing(missing: MissingTool): string {
  return `${missing.program} is not installed on this system: install the Debian package ${missing.package}`;
}

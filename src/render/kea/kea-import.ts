/**
 * Reads an existing Kea DHCPv4 configuration (Kea's JSON dialect: `//`, `/* *\/` and `#` comments) into
 * Bulwark's DHCP model, so an appliance can take over a Kea setup. Pure.
 */

/** Strips Kea's comment forms outside strings. */
export function stripKeaComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '#' || (c === '/' && text[i + 1] === '/')) {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i + 2);
      if (i < 0) break;
      i++;
    } else {
      out += c;
    }
  }
  return out;
}

export interface ImportedSubnet {
  network: string;
  pool_start: string;
  pool_end: string;
  gateway: string;
  dns_servers: string[];
  domain_name: string | null;
  lease_time: number | null;
  ntp_servers: string[];
  kea_id: number | null;
}

export interface ImportedReservation {
  network: string;
  mac_address: string;
  ip_address: string;
  hostname: string | null;
  client_id: string | null;
}

interface KeaOptionData {
  name?: string;
  code?: number;
  data?: string;
}

const optionValue = (options: KeaOptionData[] | undefined, name: string, code: number) =>
  options?.find((o) => o.name === name || o.code === code)?.data;
const list = (value: string | undefined) => (value ? value.split(',').map((s) => s.trim()).filter(Boolean) : []);

/** Subnets (first pool each) and reservations with an IPv4 address and a MAC or client id. */
export function importKeaDhcp4(text: string): { subnets: ImportedSubnet[]; reservations: ImportedReservation[]; skipped: string[] } {
  const parsed = JSON.parse(stripKeaComments(text)) as { Dhcp4?: Record<string, unknown> };
  const dhcp4 = parsed.Dhcp4 ?? {};
  const skipped: string[] = [];
  const subnetEntries: Record<string, unknown>[] = [
    ...((dhcp4.subnet4 as Record<string, unknown>[] | undefined) ?? []),
    ...((dhcp4['shared-networks'] as { subnet4?: Record<string, unknown>[] }[] | undefined) ?? []).flatMap((n) => n.subnet4 ?? []),
  ];
  const globalOptions = dhcp4['option-data'] as KeaOptionData[] | undefined;
  const subnets: ImportedSubnet[] = [];
  const reservations: ImportedReservation[] = [];
  for (const entry of subnetEntries) {
    const network = String(entry.subnet);
    const pool = (entry.pools as { pool: string }[] | undefined)?.[0]?.pool;
    const options = entry['option-data'] as KeaOptionData[] | undefined;
    const gateway = list(optionValue(options, 'routers', 3))[0];
    if (!pool || !gateway) {
      skipped.push(`subnet ${network}: ${!pool ? 'no pool' : 'no router option'}`);
    } else {
      const [start, end] = pool.includes('/') ? [pool, pool] : pool.split('-').map((s) => s.trim());
      subnets.push({
        network,
        pool_start: start,
        pool_end: end,
        gateway,
        dns_servers: list(optionValue(options, 'domain-name-servers', 6) ?? optionValue(globalOptions, 'domain-name-servers', 6)),
        domain_name: optionValue(options, 'domain-name', 15) ?? null,
        lease_time: typeof entry['valid-lifetime'] === 'number' ? (entry['valid-lifetime'] as number) : null,
        ntp_servers: list(optionValue(options, 'ntp-servers', 42)),
        kea_id: typeof entry.id === 'number' ? entry.id : null,
      });
    }
    for (const reservation of (entry.reservations as Record<string, string>[] | undefined) ?? []) {
      const mac = reservation['hw-address'];
      const clientId = reservation['client-id'];
      if (!reservation['ip-address'] || (!mac && !clientId)) {
        skipped.push(`reservation ${reservation['ip-address'] ?? '(no address)'} in ${network}: identified by ${Object.keys(reservation).find((k) => ['duid', 'circuit-id', 'flex-id'].includes(k)) ?? 'nothing'}, which Bulwark does not model`);
        continue;
      }
      reservations.push({ network, mac_address: mac ?? '', ip_address: reservation['ip-address'], hostname: reservation.hostname ?? null, client_id: clientId ?? null });
    }
  }
  return { subnets, reservations, skipped };
}

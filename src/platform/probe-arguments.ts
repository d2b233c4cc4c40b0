/**
 * The grammar of every gateway-probe value that reaches a probe tool's argument vector (`ping`, `dig`) or a
 * connection: the model's validator answers 400 with it, and the probe checks it again before it runs, so a
 * stored value that predates the grammar (an old version restored) never becomes an option.
 */
import { isHostName, isIpAddress, isInterfaceName } from '../render/grammar.js';

export type ProbeKind = 'icmp' | 'tcp' | 'http' | 'dns';

/** A host name or an IP address: never a leading `-`, no whitespace, no `@`, no `+` (dig's query options). */
const isHostOrAddress = (value: string): boolean => isIpAddress(value) || isHostName(value);

/** An http(s) URL whose host is a name or an address, without credentials (the HTTP probe's full form). */
export function isProbeUrl(value: string): boolean {
  if (!/^https?:\/\/[^\s]+$/.test(value) || /[\u0000-\u001f\u007f]/.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return url.username === '' && url.password === '' && isHostOrAddress(host);
}

/** A DNS query name: a host name, optionally with the root's trailing dot. */
const isQueryName = (value: string): boolean => isHostName(value.endsWith('.') ? value.slice(0, -1) : value);
/** The HTTP probe's expected status: 0 (any 200-399) or a status code. */
const isStatusExpectation = (value: string): boolean => /^(0|[1-5][0-9]{2})$/.test(value);

export interface ProbeFields {
  kind: ProbeKind;
  target: string | null;
  expect: string | null;
  interface: string;
}

/** The first field a probe would refuse, named as the API names it, or null when every value fits. */
export function probeFieldProblem(fields: ProbeFields): { field: string; message: string } | null {
  if (!isInterfaceName(fields.interface)) return { field: 'interface', message: 'must be an interface name (letters, digits, _ . : -, not starting with -)' };
  const { target, expect, kind } = fields;
  if (target !== null) {
    const fits = kind === 'http' ? isHostOrAddress(target) || isProbeUrl(target) : isHostOrAddress(target);
    if (!fits) return { field: 'monitor_target', message: kind === 'http' ? 'must be a host name, an IP address or an http(s) URL without credentials' : 'must be a host name or an IP address' };
  }
  if (expect !== null) {
    if (kind === 'dns' && !isQueryName(expect)) return { field: 'monitor_expect', message: 'must be a DNS name to query (the dns probe)' };
    if (kind === 'http' && !isStatusExpectation(expect)) return { field: 'monitor_expect', message: 'must be an HTTP status code or 0 for any 200-399 (the http probe)' };
    // icmp and tcp do not use it; it must still be something a later change of kind could use.
    if ((kind === 'icmp' || kind === 'tcp') && !isQueryName(expect) && !isStatusExpectation(expect)) return { field: 'monitor_expect', message: 'must be a DNS name (dns) or an HTTP status code (http)' };
  }
  return null;
}

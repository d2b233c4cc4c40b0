/**
 * The one writer of nsupdate scripts (RFC 2136 dynamic updates, for ACME DNS-01): every value is held to its
 * grammar — an IP address and port, DNS names, an algorithm from a fixed list, a base64 TSIG secret, a TXT
 * value of base64url characters (what an ACME key authorisation digest is) — so no value can add a command.
 */
import { isHostName, isIpAddress } from '../grammar.js';

export const TSIG_ALGORITHMS = ['hmac-sha256', 'hmac-sha384', 'hmac-sha512'] as const;

export interface NsupdateChange {
  server: string;
  port: number;
  zone: string;
  keyName: string;
  algorithm: string;
  secret: string;
  operation: 'add' | 'delete';
  /** The record's owner name, e.g. `_acme-challenge.www.example.org`. */
  name: string;
  value: string;
}

/** Why a change cannot be written, or null. */
export function nsupdateProblem(change: NsupdateChange): string | null {
  if (!isIpAddress(change.server)) return 'server must be an IP address';
  if (!Number.isInteger(change.port) || change.port < 1 || change.port > 65535) return 'port must be 1-65535';
  if (!isHostName(change.zone)) return 'zone must be a DNS name';
  if (!isHostName(change.keyName)) return 'key_name must be a DNS name';
  if (!(TSIG_ALGORITHMS as readonly string[]).includes(change.algorithm)) return `algorithm must be one of ${TSIG_ALGORITHMS.join(', ')}`;
  if (!/^[A-Za-z0-9+/]{16,512}={0,2}$/.test(change.secret)) return 'the TSIG secret (api_token) must be base64';
  if (!/^_acme-challenge\./.test(change.name) || !isHostName(change.name.replace(/^_acme-challenge\./, '')) || !(change.name === change.zone || change.name.endsWith(`.${change.zone}`))) return 'the record name must be _acme-challenge.<name> inside the zone';
  if (!/^[A-Za-z0-9_-]{1,255}$/.test(change.value)) return 'the TXT value must be base64url text';
  return null;
}

export function nsupdateScript(change: NsupdateChange): string {
  const problem = nsupdateProblem(change);
  if (problem) throw new Error(`RFC 2136 update refused: ${problem}`);
  const record = change.operation === 'add' ? `${change.name}. 60 IN TXT "${change.value}"` : `${change.name}. IN TXT "${change.value}"`;
  return [
    `server ${change.server} ${change.port}`,
    `zone ${change.zone}.`,
    `key ${change.algorithm}:${change.keyName} ${change.secret}`,
    `update ${change.operation} ${record}`,
    'send',
    '',
  ].join('\n');
}

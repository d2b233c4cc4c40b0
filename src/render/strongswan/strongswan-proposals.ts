/**
 * strongSwan's algorithm keywords (the names `swanctl.conf` proposals are written with), so a proposal is
 * checked before it is stored: a name charon does not know would otherwise only fail when the SA is loaded.
 */
const ENCRYPTION = new Set([
  'aes128', 'aes192', 'aes256', 'aes128ctr', 'aes192ctr', 'aes256ctr',
  ...['128', '192', '256'].flatMap((bits) => ['8', '12', '16', '64', '96', '128'].flatMap((icv) => [`aes${bits}gcm${icv}`, `aes${bits}ccm${icv}`])),
  'camellia128', 'camellia192', 'camellia256', 'chacha20poly1305', '3des',
]);
/** Combined-mode ciphers: they carry their own integrity, so a proposal needs no integrity algorithm with them. */
const isAead = (name: string) => /gcm|ccm|poly1305/.test(name);
const INTEGRITY = new Set(['sha1', 'sha256', 'sha384', 'sha512', 'sha256_96', 'aesxcbc', 'aescmac', 'md5']);
const PRF = new Set(['prfsha1', 'prfsha256', 'prfsha384', 'prfsha512', 'prfaesxcbc', 'prfaescmac', 'prfmd5']);
const DH = new Set([
  'modp1536', 'modp2048', 'modp3072', 'modp4096', 'modp6144', 'modp8192', 'modp2048s256',
  'ecp256', 'ecp384', 'ecp521', 'ecp256bp', 'ecp384bp', 'ecp512bp', 'curve25519', 'x25519', 'curve448', 'x448',
]);
const ESN = new Set(['esn', 'noesn']);

export type ProposalKind = 'ike' | 'esp' | 'ah';

/**
 * Why a comma-separated proposal list is not one strongSwan accepts for `kind`, or null when it is. Each
 * proposal is its algorithms joined by `-`: IKE needs an encryption and a key exchange (and an integrity
 * algorithm unless the cipher is combined-mode); ESP an encryption (same rule), optionally a key exchange (PFS)
 * and esn/noesn; AH an integrity algorithm. `default` stands for strongSwan's own defaults.
 */
export function proposalProblem(text: string, kind: ProposalKind): string | null {
  const proposals = text.split(',').map((p) => p.trim());
  if (proposals.length === 0 || proposals.some((p) => p === '')) return 'is empty or has an empty proposal';
  for (const proposal of proposals) {
    if (proposal === 'default') continue;
    const names = proposal.split('-');
    const unknown = names.find((name) => !ENCRYPTION.has(name) && !INTEGRITY.has(name) && !PRF.has(name) && !DH.has(name) && !ESN.has(name));
    if (unknown !== undefined) return `"${unknown.slice(0, 40)}" is not a strongSwan algorithm name`;
    const encryption = names.filter((name) => ENCRYPTION.has(name));
    const integrity = names.filter((name) => INTEGRITY.has(name));
    const dh = names.filter((name) => DH.has(name));
    if (kind === 'ah') {
      if (encryption.length > 0 || integrity.length === 0) return `"${proposal}": an AH proposal is integrity algorithms only`;
      continue;
    }
    if (encryption.length === 0) return `"${proposal}" names no encryption algorithm`;
    if (!encryption.every(isAead) && integrity.length === 0) return `"${proposal}" needs an integrity algorithm (or a combined-mode cipher such as aes256gcm16)`;
    if (kind === 'ike' && dh.length === 0) return `"${proposal}" names no key exchange (e.g. modp2048, ecp256, curve25519)`;
    if (kind === 'ike' && names.some((name) => ESN.has(name))) return `"${proposal}": esn/noesn belong to ESP proposals`;
  }
  return null;
}

/** The first encryption and integrity names of the first proposal (`aead` for combined-mode ciphers). */
export function leadingAlgorithms(text: string): { encryption: string; integrity: string } {
  const names = (text.split(',')[0] ?? '').trim().split('-');
  const encryption = names.find((name) => ENCRYPTION.has(name)) ?? 'default';
  const integrity = names.find((name) => INTEGRITY.has(name)) ?? (isAead(encryption) ? 'aead' : 'default');
  return { encryption, integrity };
}

/** A strongSwan algorithm keyword in the reference's display style (aes256gcm16 → aes-256-gcm, sha256 → hmac-sha256). */
export function displayName(keyword: string): string {
  const aes = /^aes(128|192|256)(gcm|ccm|ctr)?/.exec(keyword);
  if (aes) return `aes-${aes[1]}-${aes[2] ?? 'cbc'}`;
  const camellia = /^camellia(128|192|256)$/.exec(keyword);
  if (camellia) return `camellia-${camellia[1]}-cbc`;
  const named: Record<string, string> = {
    chacha20poly1305: 'chacha20-poly1305', '3des': '3des-cbc', sha1: 'hmac-sha1', sha256: 'hmac-sha256', sha384: 'hmac-sha384',
    sha512: 'hmac-sha512', sha256_96: 'hmac-sha256-96', md5: 'hmac-md5', aesxcbc: 'aes-xcbc', aescmac: 'aes-cmac',
  };
  return named[keyword] ?? keyword;
}

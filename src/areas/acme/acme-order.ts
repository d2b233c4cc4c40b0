/**
 * One ACME order with acme-client: the account (registered on first use, its key kept by the caller), the
 * authorisations answered by HTTP-01 (the built-in responder) or DNS-01 (a provider's TXT records), a fresh
 * ECDSA P-256 key and CSR, and the issued certificate split into the leaf and its chain.
 */
import * as acme from 'acme-client';
import type { OutboundPolicy } from '../../net/outbound.js';
import { throughOutboundGuard } from './acme-transport.js';
import type { Http01Responder } from './http01-responder.js';
import type { TxtPublisher } from './dns01.js';

export interface OrderRequest {
  directoryUrl: string;
  /** The account key (PEM); null registers a new account with a new key. */
  accountKey: string | null;
  email: string;
  names: string[];
  challenge: 'http-01' | 'dns-01';
  policy: OutboundPolicy;
  http01?: Http01Responder;
  dns01?: TxtPublisher;
}

export interface IssuedMaterial {
  accountKey: string;
  cert_pem: string;
  chain_pem: string;
  key_pem: string;
}

/** The PEM blocks of a certificate file, in order. */
export const pemBlocks = (text: string): string[] => text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];

export async function placeOrder(request: OrderRequest): Promise<IssuedMaterial> {
  return throughOutboundGuard(request.policy, async () => {
    const accountKey = request.accountKey ?? (await acme.crypto.createPrivateEcdsaKey('P-256')).toString();
    const client = new acme.Client({ directoryUrl: request.directoryUrl, accountKey });
    const [key, csr] = await acme.crypto.createCsr({ commonName: request.names[0], altNames: request.names }, await acme.crypto.createPrivateEcdsaKey('P-256'));
    const fullchain = await client.auto({
      csr,
      email: request.email,
      termsOfServiceAgreed: true,
      challengePriority: [request.challenge],
      // The CA validates; a self-check from the appliance would test its own view of DNS, not the CA's.
      skipChallengeVerification: true,
      challengeCreateFn: async (authz, challenge, keyAuthorization) => {
        if (challenge.type === 'http-01' && request.http01) request.http01.set(challenge.token, keyAuthorization);
        else if (challenge.type === 'dns-01' && request.dns01) await request.dns01.add(`_acme-challenge.${authz.identifier.value}`, keyAuthorization);
        else throw new Error(`no responder for ${challenge.type}`);
      },
      challengeRemoveFn: async (authz, challenge, keyAuthorization) => {
        if (challenge.type === 'http-01') request.http01?.remove(challenge.token);
        else if (challenge.type === 'dns-01') await request.dns01?.remove(`_acme-challenge.${authz.identifier.value}`, keyAuthorization);
      },
    });
    const [leaf, ...chain] = pemBlocks(fullchain);
    if (!leaf) throw new Error('the CA returned no certificate');
    return { accountKey, cert_pem: `${leaf}\n`, chain_pem: chain.length ? `${chain.join('\n')}\n` : '', key_pem: key.toString() };
  });
}

import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import { badGateway, badRequest } from '../core/errors.js';
import { safeEqual } from '../core/crypto.js';
import { OutboundRefused } from '../net/outbound.js';
import { AGENT_PATHS, certificateFingerprint, parseEnrolmentToken } from './protocol.js';
import { controllerRequest } from './https-client.js';
import { newSealingKeyPair } from './sealed-secrets.js';
import type { AgentState } from './state.js';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

export function checkControllerUrl(text: string, field: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw badRequest(`${field}: not a URL`);
  }
  if (url.protocol !== 'https:' || url.username || url.password || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    throw badRequest(`${field}: give the controller as https://host[:port] (no path, query or credentials)`);
  }
  return url;
}

/**
 * Zero-touch enrolment: fetch the controller's CA and check it against the hash the token pins, make a key pair
 * here (the private key never leaves the appliance), send a certificate request with the token, and keep the
 * certificate the controller's CA signed.
 */
export type EnrolledIdentity = Omit<AgentState, 'attempts' | 'applied_revision' | 'applied_document'>;

export async function enrolWithController(input: { controllerUrl: string; token: string; allowList: readonly string[]; fields?: { url: string; token: string } }): Promise<EnrolledIdentity> {
  const fields = input.fields ?? { url: 'body.controller_url', token: 'body.token' };
  const base = checkControllerUrl(input.controllerUrl, fields.url).origin;
  const token = parseEnrolmentToken(input.token, fields.token);
  const unreachable = (error: unknown) => badGateway(`controller ${base} could not be reached: ${(error as Error).message}`);
  const caAnswer = await controllerRequest(base, AGENT_PATHS.ca, { method: 'GET', tls: {}, allowList: input.allowList }).catch((error: unknown) => {
    throw error instanceof OutboundRefused ? error : unreachable(error);
  });
  let fingerprint = '';
  try {
    fingerprint = certificateFingerprint(caAnswer.text);
  } catch {
    throw badGateway(`controller ${base} did not answer its CA certificate (HTTP ${caAnswer.status})`);
  }
  if (!safeEqual(fingerprint, token.caFingerprint)) throw badGateway(`controller ${base} presented a CA whose SHA-256 is not the one the token pins: not enrolling`);
  const ca = caAnswer.text;
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: 'CN=bulwark-appliance', keys, signingAlgorithm: ALGORITHM });
  // A second key pair, X25519, for the secrets the controller seals for this appliance (sealed-secrets.ts).
  const sealing = newSealingKeyPair();
  const answer = await controllerRequest(base, AGENT_PATHS.enrol, { method: 'POST', body: { token: input.token, csr: csr.toString('pem'), sealing_key: sealing.publicKeyPem }, tls: { ca }, allowList: input.allowList }).catch((error: unknown) => {
    throw unreachable(error);
  });
  if (answer.status !== 200) {
    const reason = (() => {
      try {
        return (JSON.parse(answer.text) as { error?: string }).error ?? `HTTP ${answer.status}`;
      } catch {
        return `HTTP ${answer.status}`;
      }
    })();
    throw badRequest(`${fields.token}: the controller refused the enrolment: ${reason}`);
  }
  const enrolled = JSON.parse(answer.text) as { appliance_id: string; certificate: string; ca: string };
  const privateKey = x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { controller_url: base, appliance_id: enrolled.appliance_id, ca_pem: ca, certificate_pem: enrolled.certificate, private_key_pem: privateKey, sealing_private_key_pem: sealing.privateKeyPem };
}

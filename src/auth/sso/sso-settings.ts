import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { Type, type Static } from 'typebox';
import { badRequest } from '../../core/errors.js';

export const SSO_SETTINGS_KIND = 'oauth_settings';

/**
 * The single sign-on section of GET/PUT /auth/oauth/settings. The two switches (auto-create, TOTP after SSO)
 * are stored with the auth settings and shown here too; see the SSO area.
 */
export const SsoSettingsSchema = Type.Object({
  public_url: Type.String({
    maxLength: 2048,
    default: '',
    description: 'base URL the browser uses, e.g. https://fw.example.org; pins the host of the redirect URI. Empty: taken from the request',
  }),
  allowed_networks: Type.Array(Type.String({ maxLength: 64 }), {
    maxItems: 64,
    default: [],
    description: 'IPs/CIDRs an identity provider may resolve to although private or loopback (an on-premises provider)',
  }),
  trusted_ca_pem: Type.String({
    maxLength: 65536,
    default: '',
    description: 'extra CA certificates (PEM) trusted for identity-provider connections, besides the public roots',
  }),
});

export type SsoSettings = Static<typeof SsoSettingsSchema>;

/** Trims and drops a trailing slash, so `{public_url}/api/v1/...` never has a double slash. */
export function normalisePublicUrl(value: string): string {
  return value.trim().replace(/\/+$/, '');
}

export function validateSsoSettings(data: Record<string, unknown>): void {
  const settings = data as unknown as SsoSettings;
  if (settings.public_url !== '') {
    let url: URL;
    try {
      url = new URL(settings.public_url);
    } catch {
      throw badRequest('body.public_url must be an absolute http:// or https:// URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badRequest('body.public_url must start with http:// or https://');
    if (url.search || url.hash || url.username || url.password) throw badRequest('body.public_url must not carry credentials, a query or a fragment');
  }
  settings.allowed_networks.forEach((entry, index) => {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address);
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (!family || !prefixOk || extra !== undefined) throw badRequest(`body.allowed_networks.${index} must be an IP address or CIDR, got "${entry}"`);
  });
  if (settings.trusted_ca_pem.trim() !== '') {
    const blocks = pemCertificates(settings.trusted_ca_pem);
    if (blocks.length === 0) throw badRequest('body.trusted_ca_pem must hold PEM certificates (-----BEGIN CERTIFICATE-----)');
    blocks.forEach((block, index) => {
      try {
        new X509Certificate(block);
      } catch {
        throw badRequest(`body.trusted_ca_pem: certificate ${index + 1} is not a valid X.509 certificate`);
      }
    });
  }
}

export function pemCertificates(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

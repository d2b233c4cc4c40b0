import { Type } from 'typebox';
import { StringEnum, Uuid } from '../../model/schema-helpers.js';

export const LE_PRODUCTION = 'https://acme-v02.api.letsencrypt.org/directory';
export const LE_STAGING = 'https://acme-staging-v02.api.letsencrypt.org/directory';

const accountOptions = {
  http01_listen: Type.String({ maxLength: 64, pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[0-9.]*):[0-9]{1,5}$', default: ':80', description: 'where the built-in HTTP-01 responder listens during an order: [address]:port' }),
  allowed_networks: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32, default: [], description: 'IPs/CIDRs of a private ACME CA (e.g. step-ca) the outbound guard lets through; public CAs need none' }),
};
export const Account = Type.Object({
  id: Type.Union([Type.String(), Type.Null()]), directory_url: Type.String(), contact_email: Type.String(), registered: Type.Boolean(),
  http01_listen: Type.String(), allowed_networks: Type.Array(Type.String()),
});
export const AccountBody = Type.Object({
  directory_url: Type.String({ maxLength: 2048, default: LE_PRODUCTION }),
  contact_email: Type.String({ minLength: 3, maxLength: 254 }),
  http01_listen: Type.Optional(accountOptions.http01_listen),
  allowed_networks: Type.Optional(accountOptions.allowed_networks),
}, { required: ['contact_email'], additionalProperties: false });

export const CertStored = Type.Object({
  common_name: Type.String({ minLength: 1, maxLength: 253 }),
  sans: Type.Array(Type.String({ maxLength: 253 }), { default: [], maxItems: 100 }),
  challenge_type: StringEnum(['dns-01', 'http-01'], { default: 'dns-01' }),
  dns_provider_id: Type.Union([Uuid(), Type.Null()], { default: null }),
  status: StringEnum(['pending', 'active', 'failed', 'renewing', 'expired'], { default: 'pending' }),
  auto_renew: Type.Boolean({ default: true }),
  renew_days_before_expiry: Type.Integer({ minimum: 1, maximum: 365, default: 30 }),
  issued_at: Type.Union([Type.String(), Type.Null()], { default: null }),
  expires_at: Type.Union([Type.String(), Type.Null()], { default: null }),
  last_renew_attempt: Type.Union([Type.String(), Type.Null()], { default: null }),
  last_renew_error: Type.Union([Type.String(), Type.Null()], { default: null }),
  cert_pem: Type.Optional(Type.String()),
  chain_pem: Type.Optional(Type.String()),
  key_pem: Type.Optional(Type.String()),
});

const certEditable = {
  common_name: Type.String({ minLength: 1, maxLength: 253 }),
  sans: Type.Array(Type.String({ maxLength: 253 }), { maxItems: 100 }),
  challenge_type: Type.String({ description: 'dns-01 (default) or http-01' }),
  dns_provider_id: Type.Union([Uuid(), Type.Null()]),
  auto_renew: Type.Boolean(),
  renew_days_before_expiry: Type.Integer({ minimum: 1, maximum: 365 }),
};
export const CertCreate = Type.Object(certEditable, { required: ['common_name'], additionalProperties: false });
export const CertUpdate = Type.Object(certEditable, { required: [], additionalProperties: false });

export const CertComputed = { days_until_expiry: Type.Union([Type.Integer(), Type.Null()]), has_cert: Type.Boolean() };
export const CertSummary = Type.Object({
  id: Type.String(),
  common_name: Type.String(),
  sans: Type.Array(Type.String()),
  challenge_type: Type.String(),
  dns_provider_id: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  auto_renew: Type.Boolean(),
  renew_days_before_expiry: Type.Integer(),
  issued_at: Type.Union([Type.String(), Type.Null()]),
  expires_at: Type.Union([Type.String(), Type.Null()]),
  last_renew_attempt: Type.Union([Type.String(), Type.Null()]),
  last_renew_error: Type.Union([Type.String(), Type.Null()]),
  ...CertComputed,
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const ActionResult = Type.Object({ ok: Type.Boolean(), message: Type.String(), expires_at: Type.Union([Type.String(), Type.Null()]) });

export const TargetKinds = ['file', 'webhook', 'local-tls-store'] as const;
export const TargetStored = Type.Object({
  cert_id: Uuid(),
  kind: StringEnum(TargetKinds),
  config: Type.Record(Type.String(), Type.Any(), { default: {} }),
  last_run_at: Type.Union([Type.String(), Type.Null()], { default: null }),
  last_run_ok: Type.Boolean({ default: false }),
  last_run_error: Type.Union([Type.String(), Type.Null()], { default: null }),
});
export const TargetBody = Type.Object({
  kind: StringEnum(TargetKinds),
  config: Type.Union([Type.Record(Type.String(), Type.Any()), Type.Null()]),
}, { required: ['kind'], additionalProperties: false });
export const TargetRecord = Type.Object({
  id: Type.String(), cert_id: Type.String(), kind: Type.String(), config: Type.Record(Type.String(), Type.Any()),
  last_run_at: Type.Union([Type.String(), Type.Null()]), last_run_ok: Type.Boolean(), last_run_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(), updated_at: Type.String(),
});

export const ProviderKinds = ['cloudflare', 'route53', 'digitalocean', 'rfc2136', 'manual'] as const;
export const DnsProviderStored = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64, pattern: '\\S' }),
  kind: StringEnum(ProviderKinds),
  zone: Type.String({ minLength: 1, maxLength: 253 }),
  api_token: Type.Optional(Type.String({ maxLength: 4096, description: 'write-only; "" clears it' })),
  aws_secret_key: Type.Optional(Type.String({ maxLength: 4096, description: 'write-only; "" clears it' })),
  extra: Type.Record(Type.String(), Type.Any(), { default: {} }),
});
export const DnsProviderComputed = { has_token: Type.Boolean(), has_secret: Type.Boolean() };

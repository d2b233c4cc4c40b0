import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';

export const CaInfo = Type.Object({
  initialized: Type.Boolean(),
  subject: Type.String(),
  serial: Type.String({ description: 'uppercase hex' }),
  not_before: Type.String(),
  not_after: Type.String(),
  fingerprint: Type.String({ description: 'SHA-256 of the DER, colon-separated uppercase hex' }),
  algorithm: Type.String(),
});

export const CaCreate = Type.Object({
  common_name: Type.String({ minLength: 1, maxLength: 64, default: 'Bulwark Root CA' }),
  organization: Type.String({ minLength: 1, maxLength: 64, default: 'Bulwark' }),
  validity_days: Type.Integer({ minimum: 1, maximum: 36500, default: 3650 }),
  key_type: Type.Optional(Type.String({ description: 'accepted for compatibility; the CA key is always ECDSA P-256' })),
}, { additionalProperties: false });

/** Stored fields of an issued certificate; the private key is sealed and leaves only through key.pem. */
export const CaCertStored = Type.Object({
  cert_type: StringEnum(['server', 'client']),
  common_name: Type.String({ minLength: 1 }),
  sans: Type.String({ description: 'comma-joined, sorted, deduplicated; always includes the CN' }),
  serial: Type.String(),
  not_before: Type.String(),
  not_after: Type.String(),
  status: StringEnum(['active', 'revoked']),
  revoked_at: Type.Union([Type.String(), Type.Null()], { default: null }),
  certificate_pem: Type.String(),
  private_key_pem: Type.String(),
});

export const CaIssue = Type.Object({
  cert_type: StringEnum(['server', 'client']),
  common_name: Type.String({ minLength: 1, maxLength: 253 }),
  sans: Type.Union([Type.Array(Type.String({ maxLength: 253 }), { maxItems: 100 }), Type.String({ maxLength: 25_000 })], {
    description: 'DNS names or IP addresses, as an array or a comma/space-separated string',
  }),
  validity_days: Type.Integer({ minimum: 1, maximum: 3650, default: 365 }),
}, { required: ['cert_type', 'common_name'], additionalProperties: false });

export const CaIssued = Type.Object({
  id: Type.String(),
  certificate_pem: Type.String(),
  private_key_pem: Type.String(),
  ca_certificate_pem: Type.String(),
});

const certFields = {
  id: Type.String(),
  cert_type: Type.String(),
  common_name: Type.String(),
  sans: Type.String(),
  serial: Type.String(),
  not_before: Type.String(),
  not_after: Type.String(),
  status: StringEnum(['active', 'revoked', 'expired']),
  revoked_at: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
};
export const CaCertSummary = Type.Object(certFields);
export const CaCertDetail = Type.Object({ ...certFields, certificate_pem: Type.String() });

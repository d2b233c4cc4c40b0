import { Type } from 'typebox';

const Nullable = <T extends object>(schema: T) => Type.Union([schema as never, Type.Null()]);

export const Credentials = Type.Object(
  { username: Type.String({ minLength: 1, maxLength: 128 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);

export const RegisterBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 128 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    role: Type.Optional(Type.String({ description: 'ignored: the first account is always an admin' })),
  },
  { additionalProperties: false },
);

export const RegistrationState = Type.Object({
  registration_open: Type.Boolean({ description: 'true until the first account exists (first boot)' }),
});

export const TokenPair = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
  token_type: Type.String(),
  expires_in: Type.Integer({ description: 'access-token lifetime in seconds' }),
  access_expires_at: Type.String(),
  refresh_expires_at: Type.String(),
});

export const LoginResponse = Type.Object({
  totp_required: Type.Boolean(),
  challenge: Type.Optional(Type.String({ description: 'present when totp_required: finish at POST /auth/totp/login' })),
  tokens: Nullable(TokenPair),
  access_token: Type.Optional(Type.String()),
  refresh_token: Type.Optional(Type.String()),
  token_type: Type.Optional(Type.String()),
  expires_in: Type.Optional(Type.Integer()),
  access_expires_at: Type.Optional(Type.String()),
  refresh_expires_at: Type.Optional(Type.String()),
});

export const TotpLoginBody = Type.Object(
  { challenge: Type.String({ minLength: 1, maxLength: 128 }), code: Type.String({ minLength: 6, maxLength: 32, description: '6-digit TOTP code or a recovery code' }) },
  { additionalProperties: false },
);

export const RefreshBody = Type.Object(
  { refresh_token: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'omit to refresh a browser session from its cookie' })) },
  { additionalProperties: false },
);

/** A token pair; refreshed from the cookie, the tokens travel only in the (HttpOnly) cookies, not in the body. */
export const RefreshResponse = Type.Object({
  access_token: Type.Optional(Type.String()),
  refresh_token: Type.Optional(Type.String()),
  token_type: Type.String(),
  expires_in: Type.Integer({ description: 'access-token lifetime in seconds' }),
  access_expires_at: Type.String(),
  refresh_expires_at: Type.String(),
});
export const LogoutBody = Type.Object({ refresh_token: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) }, { additionalProperties: false });

export const Me = Type.Object({
  id: Type.String(),
  username: Type.String(),
  email: Nullable(Type.String()),
  role: Nullable(Type.String()),
  role_id: Type.String(),
  credential: Type.String(),
  permissions: Type.Array(Type.String()),
  totp_enabled: Type.Boolean(),
  auth_provider: Type.String(),
});

export const User = Type.Object({
  id: Type.String(),
  username: Type.String(),
  email: Nullable(Type.String()),
  role: Type.String(),
  role_id: Type.String(),
  enabled: Type.Boolean(),
  totp_enabled: Type.Boolean(),
  auth_provider: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const CreateUserBody = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 128 }),
    password: Type.String({ minLength: 1, maxLength: 1024, writeOnly: true }),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    role: Type.Optional(Type.String({ minLength: 1, description: 'admin, operator, viewer or a custom role (name or id); default viewer' })),
  },
  { additionalProperties: false },
);

export const UpdateUserBody = Type.Object(
  {
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, writeOnly: true })),
    email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: 254 }))),
    role: Type.Optional(Type.String({ minLength: 1 })),
    enabled: Type.Optional(Type.Boolean()),
    id: Type.Optional(Type.String()),
    created_at: Type.Optional(Type.String()),
    updated_at: Type.Optional(Type.String()),
    totp_enabled: Type.Optional(Type.Boolean()),
    auth_provider: Type.Optional(Type.String()),
    role_id: Type.Optional(Type.String()),
  },
  { additionalProperties: false, description: 'fields not sent are kept; id, timestamps and read-only fields are ignored' },
);

export const Role = Type.Object({
  id: Type.String(),
  name: Type.String(),
  permissions: Type.Array(Type.String()),
  permission_bits: Type.Integer(),
  builtin: Type.Boolean(),
  description: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const RoleBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    permissions: Type.Array(Type.String(), { maxItems: 64 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
  },
  { additionalProperties: false },
);

export const RolePatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    permissions: Type.Optional(Type.Array(Type.String(), { maxItems: 64 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
  },
  { additionalProperties: false },
);

export const PermissionInfo = Type.Object({
  key: Type.String(),
  bit: Type.Integer(),
  category: Type.String(),
  action: Type.String(),
  description: Type.String(),
});

export const ApiKey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String({ description: 'first characters of the key, to recognise it; not secret' }),
  permissions: Type.Array(Type.String()),
  owner_id: Type.String(),
  created_by: Nullable(Type.String()),
  created_at: Type.String(),
  expires_at: Nullable(Type.String()),
  last_used_at: Nullable(Type.String()),
});

export const CreatedApiKey = Type.Object({ ...ApiKey.properties, key: Type.String({ description: 'the secret: shown once, never again' }) });

export const ApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    permissions: Type.Array(Type.String(), { maxItems: 64 }),
    expires_at: Type.Optional(Type.String({ description: 'ISO 8601 UTC timestamp' })),
  },
  { additionalProperties: false },
);

export const AuditEntry = Type.Object({
  id: Type.Integer(),
  created_at: Type.String(),
  action: Type.String(),
  outcome: Type.String(),
  actor: Nullable(Type.String()),
  actor_id: Nullable(Type.String()),
  user_id: Nullable(Type.String()),
  ip_addr: Nullable(Type.String()),
  details: Nullable(Type.String()),
});

export const AuditQuery = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: 10000, default: 200 }), offset: Type.Integer({ minimum: 0, default: 0 }) },
  { additionalProperties: false },
);

export const TotpSetup = Type.Object({
  secret: Type.String({ description: 'base32 secret, for manual entry' }),
  provisioning_uri: Type.String(),
  otpauth_uri: Type.String(),
  qr_code: Type.String({ description: 'data: URL of an SVG QR code of the otpauth URI' }),
});

export const TotpVerifyBody = Type.Object({ code: Type.String({ pattern: '^[0-9]{6}$' }) }, { additionalProperties: false });
export const TotpVerified = Type.Object({ totp_enabled: Type.Boolean(), recovery_codes: Type.Array(Type.String()) });
export const TotpDisableBody = Type.Object({ password: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false });
export const Ticket = Type.Object({ ticket: Type.String(), expires_in_seconds: Type.Integer() });

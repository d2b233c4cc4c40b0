import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { PROVIDERS } from './providers.js';

export const Provider = StringEnum(PROVIDERS);

export const AiSettings = Type.Object({
  enabled: Type.Boolean(),
  active_provider: Type.String(),
  providers: Type.Array(Type.Object({
    provider: Type.String(),
    enabled: Type.Boolean(),
    api_key_set: Type.Boolean({ description: 'the key itself is never returned' }),
    endpoint: Type.String(),
    model: Type.String(),
  })),
  outbound_allow_list: Type.Array(Type.String(), { description: 'IPs/CIDRs a provider may be reached at although private or loopback (a LAN runtime)' }),
});

export const AiSettingsUpdate = Type.Object({
  enabled: Type.Boolean(),
  active_provider: Type.Union([Provider, Type.Literal('')]),
  provider: Provider,
  api_key: Type.String({ maxLength: 4096, description: 'write-only; "" clears it' }),
  endpoint: Type.String({ maxLength: 2048 }),
  model: Type.String({ maxLength: 256 }),
  provider_enabled: Type.Boolean(),
  outbound_allow_list: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64 }),
}, { required: [], additionalProperties: false });

export const ModelsQuery = Type.Object({ provider: Provider }, { required: ['provider'] });
export const ModelsResult = Type.Object({ models: Type.Array(Type.String()), error: Type.Optional(Type.String()) });

export const TestBody = Type.Object({
  provider: Provider,
  endpoint: Type.String({ maxLength: 2048 }),
  api_key: Type.String({ maxLength: 4096 }),
}, { required: ['provider'], additionalProperties: false });
export const TestResult = Type.Object({
  success: Type.Boolean(),
  status_code: Type.String(),
  endpoint: Type.String(),
  model: Type.String(),
  error: Type.Optional(Type.String()),
});

export const Detection = Type.Object({
  threat_type: Type.String(), source: Type.String(), target: Type.Union([Type.String(), Type.Null()]),
  score: Type.Number(), severity: Type.String(), evidence: Type.String(),
});

export const AnalyzeResult = Type.Object({
  message: Type.String(),
  classified: Type.Integer({ description: 'alerts given the provider\'s verdict as a suggestion in their notes (never classified or acknowledged by it)' }),
  provider_calls: Type.Integer(),
  failed_calls: Type.Integer(),
  detections: Type.Array(Detection),
  connections_examined: Type.Integer(),
  connections_unavailable: Type.Union([Type.String(), Type.Null()], { description: 'why the connection table could not be read (the connection detectors then saw nothing); null when it was read' }),
  alerts_examined: Type.Integer(),
});

export const AuditEntry = Type.Object({
  id: Type.String(),
  kind: StringEnum(['classification', 'detection']),
  alert_id: Type.Union([Type.String(), Type.Null()]),
  signature_id: Type.Union([Type.Integer(), Type.Null()]),
  signature_msg: Type.String(),
  provider: Type.String(),
  model: Type.String(),
  prompt_preview: Type.String(),
  response: Type.String(),
  classification: Type.Union([Type.String(), Type.Null()]),
  duration_ms: Type.Union([Type.Integer(), Type.Null()]),
  actor: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});

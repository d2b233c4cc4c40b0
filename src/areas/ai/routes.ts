import { Type } from 'typebox';
import type { Area } from '../area.js';
import { route, type RouteSpec } from '../../http/route.js';
import type { AppContext } from '../../context.js';
import { ErrorBody } from '../../http/route.js';
import { AiService } from './service.js';
import type { IdsService } from '../ids/service.js';
import { AiSettings, AiSettingsUpdate, AnalyzeResult, AuditEntry, ModelsQuery, ModelsResult, TestBody, TestResult } from './schema.js';

const errors = { 400: ErrorBody, 502: ErrorBody };

/** The AI area classifies the IDS area's alerts: it needs that area's service. */
export function createAiArea(context: AppContext, needs: { ids: IdsService }): Area {
  return { name: 'ai', routes: routes(new AiService(context, needs.ids)) };
}

function routes(ai: AiService): RouteSpec[] {
  return [
    {
      method: 'POST', path: '/api/v1/ai/analyze', access: 'ids:write', tags: ['ai'],
      summary: 'Run the local detectors and, when configured, classify unreviewed high-severity alerts with the AI provider',
      schema: { response: { 200: AnalyzeResult, ...errors } },
      handler: (request) => ai.analyze(request.identity?.username ?? null),
    },
    route({
      method: 'GET', path: '/api/v1/ai/audit-log', access: 'ids:read', tags: ['ai'], summary: 'Every detection and provider call with its verdict, newest first',
      schema: { querystring: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 10000, default: 50 }) }), response: { 200: Type.Object({ entries: Type.Array(AuditEntry) }), ...errors } },
      handler: (request) => ({ entries: ai.auditLog(request.query.limit) }),
    }),
    {
      method: 'GET', conditional: 'read', path: '/api/v1/settings/ai', access: 'settings:read', tags: ['settings'], summary: 'AI provider configuration (API keys are never returned)',
      schema: { response: { 200: AiSettings } },
      handler: () => ai.settings(),
    },
    route({
      method: 'PUT', path: '/api/v1/settings/ai', access: 'settings:write', tags: ['settings'],
      summary: 'Change AI settings; api_key, endpoint, model and provider_enabled apply to the named provider',
      schema: { body: AiSettingsUpdate, response: { 200: Type.Object({ message: Type.String() }), ...errors } },
      handler: (request) => {
        ai.updateSettings(request.body);
        return { message: 'AI settings saved' };
      },
    }),
    route({
      method: 'GET', path: '/api/v1/settings/ai/models', access: 'settings:read', tags: ['settings'], summary: 'Models the provider offers',
      schema: { querystring: ModelsQuery, response: { 200: ModelsResult, ...errors } },
      handler: (request) => ai.models(request.query.provider),
    }),
    route({
      method: 'POST', path: '/api/v1/settings/ai/test', access: 'settings:write', tags: ['settings'],
      summary: 'Probe a provider with the stored or given endpoint and key',
      schema: { body: TestBody, response: { 200: TestResult, ...errors } },
      handler: (request) => ai.test(request.body),
    }),
  ];
}

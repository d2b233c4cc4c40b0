import { Type } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import { ErrorAnswer } from '../../http/documented-responses.js';
import type { ConfigData } from '../../store/config-store.js';
import { HistoryEntry, InstallLocalBody, InstallResult, RollbackBody, Schedule, UpdateInfo, UpdatePreview, UpdateStatus } from './schema.js';
import { UpdatesService } from './service.js';

const TAGS = ['updates'];
const ReleaseFeedFailed = ErrorAnswer('The release feed or the download failed, or the release lacks a verifiable tarball');
const Refused = ErrorAnswer('Missing signature, bad signature (tampered or corrupt archive) or an unusable archive: nothing changed');
const NotSwitchable = ErrorAnswer('Unknown key (not in trusted-keys), not installed, nothing to restart Bulwark, or a switch in progress: nothing changed');
const PowerResult = Type.Object({ message: Type.String(), executed: Type.Boolean({ description: 'false on the simulated platform: the request is recorded only' }) });

function routes(context: AppContext, updates: UpdatesService): RouteSpec[] {
  const schedule = context.models.singleton({ kind: 'updates_schedule', noun: 'maintenance window', writeAccess: 'updates:install', schema: Schedule });
  const [getSchedule, putSchedule] = singletonRoutes(schedule, { path: '/api/v1/updates/schedule', access: { read: 'updates:read', write: 'updates:install' }, tags: TAGS });
  return [
    {
      method: 'GET', path: '/api/v1/updates/status', access: 'updates:read', tags: TAGS, summary: 'Pending OS/package updates and the last check',
      schema: { response: { 200: UpdateStatus } },
      handler: () => updates.status(),
    },
    {
      method: 'POST', path: '/api/v1/updates/check', access: 'updates:read', tags: TAGS, summary: 'Refresh the package index and list pending updates',
      schema: { response: { 200: Type.Object({ message: Type.String(), ...UpdateStatus.properties }) } },
      handler: () => updates.check(),
    },
    {
      method: 'GET', path: '/api/v1/updates/history', access: 'updates:read', tags: TAGS, summary: 'The newest 50 update actions',
      schema: { response: { 200: Type.Array(HistoryEntry) } },
      handler: () => updates.history(),
    },
    {
      method: 'POST', path: '/api/v1/updates/install', access: 'updates:install', tags: TAGS, summary: 'Install every pending OS/package update',
      schema: { response: { 200: Type.Object({ message: Type.String(), installed: Type.Array(Type.String()), needs_reboot: Type.Boolean() }) } },
      handler: () => updates.install(),
    },
    {
      method: 'GET', path: '/api/v1/updates/preview', access: 'updates:read', tags: TAGS, summary: 'What installing the pending updates would change (apt-get -s upgrade: nothing is changed)',
      schema: { response: { 200: UpdatePreview } },
      handler: () => updates.preview(),
    },
    {
      method: 'POST', path: '/api/v1/updates/schedule/run', access: 'updates:install', tags: TAGS, summary: "Run the maintenance window's steps now, as the scheduler does at the window",
      schema: { response: { 200: Type.Object({ message: Type.String(), steps: Type.Array(Type.String()) }), 409: ErrorAnswer('A maintenance window is already running') } },
      handler: () => updates.runMaintenance('manual'),
    },
    getSchedule,
    {
      ...putSchedule,
      handler: async (request, reply) => {
        const stored = (await putSchedule.handler(request, reply)) as ConfigData;
        updates.applySchedule(stored);
        return stored;
      },
    },
    {
      method: 'POST', path: '/api/v1/updates/reboot', access: 'system:reboot', tags: TAGS, summary: 'Reboot the appliance in 10 seconds (the simulation records the request)',
      schema: { response: { 200: PowerResult } },
      handler: () => updates.power('reboot', 10, 'reboot requested through the API', 'reboot'),
    },
    {
      method: 'POST', path: '/api/v1/updates/shutdown', access: 'system:reboot', tags: TAGS, summary: 'Shut the appliance down in 10 seconds (the simulation records the request)',
      schema: { response: { 200: PowerResult } },
      handler: () => updates.power('shutdown', 10, 'shutdown requested through the API', 'shutdown'),
    },
    {
      method: 'GET', path: '/api/v1/updates/appliance/status', access: 'updates:read', tags: TAGS, summary: "The appliance's own version, the last release check and the rollback state",
      schema: { response: { 200: UpdateInfo } },
      handler: () => updates.appliance.info(),
    },
    {
      method: 'POST', path: '/api/v1/updates/appliance/check', access: 'updates:read', tags: TAGS, summary: 'Check the release feed (settings section appliance_updates.release_url) through the outbound guard',
      schema: { response: { 200: UpdateInfo, 502: ReleaseFeedFailed } },
      handler: () => updates.appliance.check(),
    },
    {
      method: 'POST', path: '/api/v1/updates/appliance/install', access: 'updates:install', tags: TAGS, summary: 'Download the latest release and its signature, verify (Ed25519, trusted keys), unpack, switch and restart with automatic rollback',
      schema: { response: { 200: InstallResult, 400: Refused, 409: NotSwitchable, 502: ReleaseFeedFailed } },
      handler: () => updates.appliance.install(),
    },
    route({
      method: 'POST', path: '/api/v1/updates/appliance/install-local', access: 'updates:install', tags: TAGS, bodyLimit: 700 * 1024 * 1024,
      summary: 'Install an uploaded signed release (JSON: base64 archive and its signature file): verify, unpack, switch, restart with automatic rollback',
      schema: { body: InstallLocalBody, response: { 200: Type.Object({ message: Type.String(), signer_key_id: Type.String() }), 400: Refused, 409: NotSwitchable } },
      handler: (request) => updates.appliance.installLocal(request.body),
    }),
    route({
      method: 'POST', path: '/api/v1/updates/appliance/rollback', access: 'updates:install', tags: TAGS, summary: 'Return to a kept release (default: the one before the last switch) and restart, with automatic return if it does not answer ready',
      schema: { body: RollbackBody, response: { 200: InstallResult, 404: ErrorAnswer('No such kept release'), 409: NotSwitchable } },
      handler: (request) => updates.appliance.rollback(request.body ?? {}),
    }),
    {
      method: 'POST', path: '/api/v1/updates/appliance/restart', access: 'updates:install', tags: TAGS, summary: 'Restart Bulwark through its service manager (systemd or bulwark-supervise.sh)',
      schema: { response: { 200: Type.Object({ message: Type.String() }), 409: NotSwitchable } },
      handler: () => updates.appliance.restart(),
    },
    {
      method: 'POST', path: '/api/v1/updates/appliance/reboot', access: 'updates:install', tags: TAGS, summary: 'Reboot in one minute after an install (the simulation records the request)',
      schema: { response: { 200: PowerResult } },
      handler: () => updates.power('reboot', 60, 'reboot after an appliance update', 'appliance_reboot'),
    },
  ];
}

export function createUpdatesArea(context: AppContext): Area {
  const updates = new UpdatesService(context);
  return { name: 'updates', routes: routes(context, updates), stop: () => updates.stop() };
}

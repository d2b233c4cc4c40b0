import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route } from '../../http/route.js';
import { ErrorAnswer } from '../../http/documented-responses.js';
import type { ConfigData } from '../../store/config-store.js';
import { FlowExportView } from './schema.js';
import { FlowExportService } from './service.js';

const TAGS = ['settings'];

/** NetFlow v9 / IPFIX export of the flows through the box (docs/flow-export.md). */
export function createFlowExportArea(context: AppContext): Area & { service: FlowExportService } {
  const service = new FlowExportService(context);
  // Reload, restore, import and the commit-confirm rollback apply the stored section like every other area's.
  context.apply.register('flow-export', async () => {
    await service.applyStored();
  });
  return {
    name: 'flow-export',
    service,
    routes: [
      {
        method: 'GET', path: '/api/v1/settings/flow-export', access: 'settings:read', tags: TAGS,
        summary: 'Flow export (NetFlow v9 / IPFIX): collectors, timeouts, sampling, interfaces, and the exporters\' live state',
        schema: { response: { 200: FlowExportView } },
        handler: () => service.view(),
      },
      route({
        method: 'PUT', path: '/api/v1/settings/flow-export', access: 'settings:write', tags: TAGS,
        summary: 'Change flow export and apply it at once (a refused apply keeps the previous export)',
        schema: {
          body: service.model.schemas.patch,
          response: {
            200: FlowExportView,
            409: ErrorAnswer('The exporter refused (an interface that does not exist, a collector the outbound guard refuses once resolved)'),
            503: ErrorAnswer('The exporter is not installed (names the Debian package)'),
          },
        },
        handler: async (request) => {
          await service.update(request.body as ConfigData);
          return service.view();
        },
      }),
    ],
    async start() {
      await service.applyStored().catch((error: Error) => context.log.warn({ err: error.message }, 'flow export did not start'));
    },
    async stop() {
      await context.platform.flowExport.close().catch(() => undefined);
    },
  };
}

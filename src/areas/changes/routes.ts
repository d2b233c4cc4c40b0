/** POST /api/v1/changes: atomic change sets over every collection and settings section (an API extension). */
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { requireIdentity } from '../../http/access.js';
import { applyChangeSet, prepareChangeSet, ChangeSetAnswer, ChangeSetBody, ChangeSetQuery, ChangeTargets, MAX_OPERATIONS } from './change-set.js';

/** `routes()` gives every other area's routes, read once when the first change set arrives (all areas exist by then). */
export function createChangesArea(context: AppContext, needs: { routes: () => readonly RouteSpec[] }): Area {
  let targets: ChangeTargets | undefined;
  const routes: RouteSpec[] = [
    route({
      method: 'POST', path: '/api/v1/changes', access: 'authenticated', tags: ['config'],
      summary: `Apply up to ${MAX_OPERATIONS} create/update/delete operations on collections and settings sections all or none, each needing its own permission; ?dry_run=true answers the diff without writing (extension)`,
      bodyLimit: 10 * 1024 * 1024,
      schema: { querystring: ChangeSetQuery, body: ChangeSetBody, response: { 200: ChangeSetAnswer } },
      handler: async (request) => {
        targets ??= new ChangeTargets(needs.routes());
        const identity = requireIdentity(request);
        await prepareChangeSet(targets, identity.permissions, request.body.operations);
        await context.apply.prepareGates();
        // Judged on what the set breaks: assertions the stored configuration already breaks are /pending's and /reload's business.
        const gate = { actor: identity.username, clientIp: request.ip, force: request.query.force, what: 'this change set', ignore: context.apply.gateFindings('stored') };
        return applyChangeSet(context, targets, identity.permissions, request.body.operations, request.query.dry_run, gate);
      },
    }),
  ];
  return { name: 'changes', routes };
}

import { Type } from 'typebox';
import type { ModelChange } from '../../src/model/declarations.js';
import type { Area } from '../../src/areas/area.js';
import type { AppContext } from '../../src/context.js';
import { createAuthArea } from '../../src/areas/auth/routes.js';
import { createConfigArea } from '../../src/areas/config/routes.js';
import { collectionRoutes } from '../../src/http/collection-routes.js';
import { singletonRoutes } from '../../src/http/singleton-routes.js';

/** What the recording applier saw each time it ran, and how to make it fail. */
export interface ApplierProbe {
  runs: { hosts: string[] }[];
  /** What the area's change hook saw, in order. */
  changes: ModelChange[];
  failNext: boolean;
  checkErrors: string[];
}

/**
 * A small area with two collections (one with a sealed secret, one referenced by name), a settings section
 * with a secret, and an applier that records the configuration it applied and can be told to fail.
 */
export function lifecycleTestArea(context: AppContext, probe: ApplierProbe): Area {
  const groups = context.models.collection({
    kind: 'test_group', noun: 'group', writeAccess: 'backup:write',
    schema: Type.Object({ name: Type.String({ minLength: 1 }) }),
    unique: ['name'],
  });
  const hosts = context.models.collection({
    kind: 'test_host', noun: 'host', writeAccess: 'backup:write',
    schema: Type.Object({
      name: Type.String({ minLength: 1, maxLength: 32 }),
      port: Type.Integer({ minimum: 1, maximum: 65535, default: 22 }),
      group: Type.Optional(Type.String()),
      password: Type.Optional(Type.String({ minLength: 4 })),
    }),
    unique: ['name'],
    references: [{ field: 'group', kind: 'test_group', by: 'name' }],
    writeOnly: ['password'],
  });
  const settings = context.models.singleton({
    kind: 'test_settings', noun: 'test settings', writeAccess: 'backup:write',
    schema: Type.Object({ mode: Type.String({ default: 'normal', enum: ['normal', 'strict'] }), token: Type.String() }),
    writeOnly: ['token'],
  });
  context.models.onChanged([groups, hosts, settings], (change) => {
    probe.changes.push(change);
  });
  context.apply.register('test-applier', async () => {
    if (probe.failNext) {
      probe.failNext = false;
      throw new Error('simulated daemon refused the configuration');
    }
    probe.runs.push({ hosts: context.store.list('test_host').map((o) => String(o.data.name)) });
  }, { check: () => ({ errors: [...probe.checkErrors], info: ['test applier rendered its configuration'] }) });
  const access = { read: 'backup:read', write: 'backup:write' } as const;
  return {
    name: 'lifecycle-test',
    routes: [
      ...collectionRoutes(groups, { path: '/api/v1/test/groups', access, tags: ['test'] }),
      ...collectionRoutes(hosts, { path: '/api/v1/test/hosts', access, tags: ['test'] }),
      ...singletonRoutes(settings, { path: '/api/v1/test/settings', access, tags: ['test'] }),
    ],
  };
}

export const newProbe = (): ApplierProbe => ({ runs: [], changes: [], failNext: false, checkErrors: [] });

/** auth (for credentials), the test area, and the config area last, as in production. */
export const lifecycleAreas = (probe: ApplierProbe) => (context: AppContext): Area[] => [
  createAuthArea(context),
  lifecycleTestArea(context, probe),
  createConfigArea(context),
];

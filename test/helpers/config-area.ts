import { Type } from 'typebox';
import type { Area } from '../../src/areas/area.js';
import { authArea } from '../../src/areas/auth/routes.js';
import { configArea } from '../../src/areas/config/routes.js';
import { Singleton } from '../../src/http/singleton.js';

/** What the recording applier saw each time it ran, and how to make it fail. */
export interface ApplierProbe {
  runs: { hosts: string[] }[];
  failNext: boolean;
  checkErrors: string[];
}

/**
 * A small area with two collections (one with a sealed secret, one referenced by name), a settings section
 * with a secret, and an applier that records the configuration it applied and can be told to fail.
 */
export function lifecycleTestArea(probe: ApplierProbe): Area {
  return {
    name: 'lifecycle-test',
    routes(context) {
      const groups = context.collections.declare({
        kind: 'test_group', path: '/api/v1/test/groups', noun: 'group', tags: ['test'],
        access: { read: 'backup:read', write: 'backup:write' },
        schema: Type.Object({ name: Type.String({ minLength: 1 }) }),
        unique: ['name'],
      });
      const hosts = context.collections.declare({
        kind: 'test_host', path: '/api/v1/test/hosts', noun: 'host', tags: ['test'],
        access: { read: 'backup:read', write: 'backup:write' },
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
      const settings = new Singleton({
        kind: 'test_settings', path: '/api/v1/test/settings', noun: 'test settings', tags: ['test'],
        access: { read: 'backup:read', write: 'backup:write' },
        schema: Type.Object({ mode: Type.String({ default: 'normal', enum: ['normal', 'strict'] }), token: Type.String() }),
        writeOnly: ['token'],
      }, context.store, context.sealer);
      context.apply.register('test-applier', async () => {
        if (probe.failNext) {
          probe.failNext = false;
          throw new Error('simulated daemon refused the configuration');
        }
        probe.runs.push({ hosts: context.store.list('test_host').map((o) => String(o.data.name)) });
      }, { check: () => ({ errors: [...probe.checkErrors], info: ['test applier rendered its configuration'] }) });
      return [...groups.routes(), ...hosts.routes(), ...settings.routes()];
    },
  };
}

export const newProbe = (): ApplierProbe => ({ runs: [], failNext: false, checkErrors: [] });

/** auth (for credentials), the test area, and the config area last, as in production. */
export const lifecycleAreas = (probe: ApplierProbe): Area[] => [authArea, lifecycleTestArea(probe), configArea];

import type { ChangeTarget } from '../../http/change-target.js';
/**
 * Multi-WAN stores a port field as pf's token (`"443"` or `"8000:8080"`, docs/multiwan.md), while requests take
 * every form of common/port-input.ts. The collection's POST and PUT routes get the request schema of those
 * forms and turn the fields into the token before the collection validates and stores the record.
 */
import type { PortRange } from '../../compile/firewall-types.js';
import type { RouteSpec } from '../../http/route.js';
import { parsePortInput, PortInput } from '../../model/port-input.js';

/** The port fields of policies and leaks: pf tokens when stored, any form of common/port-input.ts in a request. */
export const POLICY_PORT_FIELDS = ['src_port', 'dst_port'] as const;
export const LEAK_PORT_FIELDS = ['ports'] as const;

export const portToken = (range: PortRange | null): string | null =>
  range === null ? null : range.start === range.end ? String(range.start) : `${range.start}:${range.end}`;

/** A stored or requested port field → its token; a 400 naming `body.<field>` when it is not a port or range. */
export const normalisePortField = (value: unknown, field: string): string | null => portToken(parsePortInput(value, `body.${field}`));

/** The collection's write routes with `fields` taking every port form; other routes are returned as they are. */
export function withPortInput(routes: readonly RouteSpec[], fields: readonly string[]): RouteSpec[] {
  return routes.map((route) => {
    const body = route.schema?.body as { properties?: Record<string, { default?: unknown }> } | undefined;
    if ((route.method !== 'POST' && route.method !== 'PUT') || !body?.properties) return route;
    const properties: Record<string, object> = { ...body.properties };
    for (const field of fields) {
      const stored = body.properties[field];
      // The create body keeps the stored field's default (null), so an omitted port still means none.
      if (stored) properties[field] = PortInput(stored.default !== undefined ? { default: stored.default } : {});
    }
    const normalise = (sent: Record<string, unknown>) => {
      for (const field of fields) if (sent[field] !== undefined) sent[field] = normalisePortField(sent[field], field);
    };
    const portBody = { ...body, properties };
    return {
      ...route,
      schema: { ...route.schema, body: portBody },
      handler: (request, reply) => {
        normalise(request.body as Record<string, unknown>);
        return route.handler(request, reply);
      },
      // A change set's operation takes the same port forms.
      ...(route.change ? {
        change: {
          ...route.change, body: portBody,
          apply: (params, sent, ifMatch, field) => {
            if (sent) normalise(sent);
            return route.change!.apply(params, sent, ifMatch, field);
          },
        } satisfies ChangeTarget,
      } : {}),
    };
  });
}

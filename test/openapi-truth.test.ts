import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, json } from './helpers/app.js';
import { adminHeaders, type Headers } from './helpers/auth.js';
import { forbidOutsideNetwork } from './helpers/no-network.js';
import { discrepancy, OperationDriver, type OpenApiDocument } from './helpers/openapi-driver.js';

/** Served by plugins, not API operations: the document itself and Swagger UI. */
const isDocumentation = (path: string) => path.startsWith('/api/docs') || path === '/api/v1/openapi.json';

/** Ends the admin's own session: driven after everything else. */
const LAST: ReadonlySet<string> = new Set(['POST /api/v1/auth/logout']);

/** Reads before writes, deletes after both, so item routes meet the objects the driver finds or creates. */
const PHASE: Record<string, number> = { GET: 0, PUT: 1, PATCH: 1, POST: 1, DELETE: 2 };
const phaseOf = (method: string, path: string) => (LAST.has(`${method} ${path}`) ? 3 : PHASE[method]);

test('every operation answers only statuses and media types that its OpenAPI entry documents', async () => {
  const network = forbidOutsideNetwork();
  const t = await startTestApp();
  try {
    let admin: Headers = await adminHeaders(t.app);
    const document = json<OpenApiDocument>(await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' }));
    const driver = new OperationDriver(t.app, document, () => admin);
    const routes = t.app.catalogue
      .filter((route) => !isDocumentation(route.path))
      .map((route, order) => ({ ...route, order }))
      .sort((a, b) => phaseOf(a.method, a.path) - phaseOf(b.method, b.path) || a.order - b.order);

    const failures: string[] = [];
    const answered = new Map<string, number>();
    for (const route of routes) {
      const name = `${route.method} ${route.path}`;
      const operation = driver.operation(route.method, route.path);
      if (!operation) {
        failures.push(`${name}: not in the document`);
        continue;
      }
      let { url, response } = await driver.drive(route.method, route.path);
      // An operation may end the admin's session (a password change, a revocation): sign in again and retry.
      if (response.statusCode === 401 && route.access !== 'public') {
        admin = await adminHeaders(t.app);
        ({ url, response } = await driver.drive(route.method, route.path));
      }
      const status = String(response.statusCode);
      answered.set(status, (answered.get(status) ?? 0) + 1);
      const wrong = discrepancy(operation, response);
      if (wrong) failures.push(`${route.method} ${url}: ${wrong} (${response.body.slice(0, 160)})`);
    }
    const successes = [...answered].filter(([status]) => /^[23]/.test(status)).reduce((n, [, count]) => n + count, 0);
    // The share of successes shows the comparison reaches the handlers, not only validation and 404s.
    console.log(`answers by status: ${JSON.stringify(Object.fromEntries(answered))}; refused network: ${network.attempts.length}`);
    assert.ok(routes.length > 400, `drove ${routes.length} operations`);
    assert.ok(successes > routes.length / 2, `only ${successes} of ${routes.length} operations succeeded`);
    assert.deepEqual(failures, []);
  } finally {
    await t.close();
    network.restore();
  }
});

/**
 * A write answers only after the change hooks its writes fired have run, also when its handler sends the answer
 * itself (`reply.status(201).send(...)`): a hook's failure is the request's failure, and a read right after a
 * success sees the hook's effect.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import type { Area } from '../src/areas/area.js';
import type { AppContext } from '../src/context.js';
import { route } from '../src/http/route.js';
import { conflict } from '../src/core/errors.js';
import { createAuthArea } from '../src/areas/auth/routes.js';
import { startAreaApp } from './helpers/area-app.js';

const hookState = { failNext: false, seen: [] as string[] };

function selfSendingArea(context: AppContext): Area {
  const notes = context.models.collection({
    kind: 'test_note', noun: 'note', writeAccess: 'backup:write',
    schema: Type.Object({ text: Type.String() }),
  });
  context.models.onChanged([notes], async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (hookState.failNext) {
      hookState.failNext = false;
      throw conflict('the hook refused the change');
    }
    hookState.seen.push(...context.store.list('test_note').map((note) => String(note.data.text)));
  });
  return {
    name: 'self-sending',
    routes: [
      route({
        method: 'POST', path: '/api/v1/test/notes', access: 'backup:write', tags: ['test'], summary: 'create a note, answering by reply.send',
        schema: { body: Type.Object({ text: Type.String() }) },
        handler: (request, reply) => reply.status(201).send(notes.toRecord(notes.create(request.body))),
      }),
    ],
  };
}

test('a handler that sends its own 201 answers after the hooks, and a failing hook fails the request', async () => {
  const t = await startAreaApp({ areas: (context) => [createAuthArea(context), selfSendingArea(context)] });
  try {
    const created = await t.request('POST', '/api/v1/test/notes', { text: 'first' });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(hookState.seen, ['first'], 'the hook had run when the answer arrived');

    hookState.failNext = true;
    const refused = await t.request('POST', '/api/v1/test/notes', { text: 'second' });
    assert.equal(refused.statusCode, 409, refused.body);
    assert.deepEqual(JSON.parse(refused.body), { error: 'the hook refused the change' }, 'the failure is answered, not a 201');
  } finally {
    await t.close();
  }
});

import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import { Notice } from './error-alert';
import { RecordForm, type FieldSpec } from './record-form';

/**
 * A one-shot operation of the API as a form (not a record): the fields are POSTed to `path` (or the path the body
 * names), the answer's `message` is announced, and a refusal shows in the form with the field the API names.
 * Offered only to an account holding `permission`.
 */
export function ActionForm({ title, permission, path, method = 'POST', fields, submitLabel, help, answered }: {
  title: string;
  permission: string;
  /**
   * The API path written out (`/multiwan/enable-fibs`), or, for an operation on one thing, the path and body made
   * from the form (`/interfaces/eth1/role` from the interface field, the rest as the body).
   */
  path: string | ((body: Record<string, unknown>) => { path: string; body: Record<string, unknown> });
  method?: 'POST' | 'PUT';
  fields: readonly FieldSpec[];
  submitLabel: string;
  help?: ComponentChildren;
  /** What to show of the answer beyond its message (and to reload what it changed). */
  answered?: (answer: unknown) => void;
}) {
  const { api, can } = useSession();
  const [message, setMessage] = useState<string | null>(null);
  if (!can(permission)) return null;
  return (
    <section class="panel" aria-label={title}>
      <header class="panel-head">
        <h2>{title}</h2>
      </header>
      {help && <p class="help">{help}</p>}
      <RecordForm
        title={title}
        hideTitle
        fields={fields}
        submitLabel={submitLabel}
        onSubmit={async (body) => {
          setMessage(null);
          const target = typeof path === 'string' ? { path, body } : path(body);
          const answer = (await api.request<{ message?: string } | null>(method, target.path, { body: target.body })).data;
          setMessage(answer?.message ?? `${title}: done.`);
          answered?.(answer);
        }}
      />
      {message && <Notice>{message}</Notice>}
    </section>
  );
}

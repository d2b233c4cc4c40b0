import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { CommitConfirmStatus, Pending } from '../api/types';
import { ErrorAlert, messageOf } from '../components/error-alert';
import { useLoad } from '../components/use-load';
import { usePendingReport } from '../live/use-pending-report';
import { CommitConfirmBar } from './commit-confirm-bar';

/** Names of the kinds /pending reports, singular and plural. */
const KIND_NAMES: Record<string, [string, string]> = {
  rules: ['rule', 'rules'],
  aliases: ['alias', 'aliases'],
  schedules: ['schedule', 'schedules'],
  nat: ['NAT rule', 'NAT rules'],
  settings: ['setting', 'settings'],
};

function summarise(pending: Pending): string {
  const parts: string[] = [];
  for (const [kind, change] of Object.entries(pending.changes)) {
    const [one, many] = KIND_NAMES[kind] ?? [kind, kind];
    for (const verb of ['added', 'changed', 'removed'] as const) {
      const count = change[verb].length;
      if (count > 0) parts.push(`${count} ${count === 1 ? one : many} ${verb}`);
    }
  }
  if (pending.dns && parts.length === 0) parts.push('DNS resolver settings changed');
  return parts.join(', ');
}

/**
 * The stored configuration differs from what runs: say what, show the diff, and offer Apply (POST /reload) and
 * Apply with commit-confirm, which rolls back by itself unless confirmed in time. The report arrives live (changes
 * by other administrators included); the commit-confirm status is read again after this console's writes and
 * whenever the stream announces a configuration event.
 */
export function PendingBanner() {
  const { api, can } = useSession();
  const commitConfirm = useLoad(
    () => (can('backup:read') ? api.get<CommitConfirmStatus>('/config/commit-confirm/status') : Promise.resolve(null)),
    'commit-confirm',
  );
  const pending = usePendingReport(commitConfirm.reload);
  useEffect(() => api.onWrite(commitConfirm.reload), [api, commitConfirm.reload]);
  const [diff, setDiff] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [timeout, setTimeoutSeconds] = useState('120');

  const act = async (what: () => Promise<string>) => {
    setBusy(true);
    setError(null);
    setMessage(null);
    try {
      setMessage(await what());
      setDiff(null);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };

  const [autoConfirm, setAutoConfirm] = useState(false);
  const apply = (force = false) => act(async () => (await api.post<{ message: string }>(force ? '/reload?force=true' : '/reload', {})).message);
  const applyWithCommitConfirm = () =>
    act(async () => (await api.post<{ message: string }>('/config/commit-confirm', { timeout_seconds: Number(timeout), apply: true, auto_confirm: autoConfirm })).message);
  const showDiff = async () => {
    setError(null);
    try {
      const answer = await api.get<{ unified: string }>('/config/diff');
      setDiff(answer.unified || '(no differences)');
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  const status = commitConfirm.data;
  const report = pending.pending;
  const changes = report && (report.firewall || report.nat || report.dns) ? summarise(report) : '';
  const broken = report?.broken_assertions ?? [];
  return (
    <div class="banners">
      {status?.active && <CommitConfirmBar status={status} onDone={commitConfirm.reload} />}
      {changes && (
        <section class="banner pending" aria-label="Pending changes">
          <p>
            <strong>Pending changes</strong> (not yet applied): {changes}.
          </p>
          {broken.length > 0 && (
            <div class="broken-assertions" role="alert" aria-label="Assertions the pending changes break">
              <p>
                Applying would break {broken.length === 1 ? 'an assertion' : `${broken.length} assertions`}; Apply is refused unless forced:
              </p>
              <ul>
                {broken.map((b) => (
                  <li key={b.id}>
                    <strong>{b.name}</strong>: expects {b.expect}, {b.outcome === 'error' ? `cannot be judged (${b.decided_by})` : `${b.outcome} by ${b.decided_by}`} — {b.detail}
                  </li>
                ))}
              </ul>
            </div>
          )}
          <div class="banner-actions">
            {can('backup:read') && (
              <button type="button" class="secondary" onClick={() => (diff === null ? showDiff() : setDiff(null))}>
                {diff === null ? 'Show diff' : 'Hide diff'}
              </button>
            )}
            {can('rules:write') && (
              <button type="button" disabled={busy} onClick={() => apply()}>
                Apply
              </button>
            )}
            {can('rules:write') && broken.length > 0 && (
              <button type="button" class="danger" disabled={busy} onClick={() => apply(true)}>
                Apply anyway (audited)
              </button>
            )}
            {can('rules:write') && can('backup:write') && !status?.active && (
              <span class="inline-form">
                <label class="field inline">
                  <span>Roll back after (seconds)</span>
                  <input name="commit_confirm_timeout" type="number" min={10} max={86400} value={timeout} onInput={(event) => setTimeoutSeconds((event.currentTarget as HTMLInputElement).value)} />
                </label>
                <label class="field inline">
                  <input name="auto_confirm" type="checkbox" checked={autoConfirm} onChange={(event) => setAutoConfirm((event.currentTarget as HTMLInputElement).checked)} />
                  <span>Confirm by itself when every assertion holds</span>
                </label>
                <button type="button" disabled={busy} onClick={applyWithCommitConfirm}>
                  Apply with commit-confirm
                </button>
              </span>
            )}
          </div>
          {diff !== null && (
            <pre class="diff" aria-label="Diff of the pending changes">
              {diff}
            </pre>
          )}
        </section>
      )}
      <ErrorAlert message={error ?? pending.error} />
      {message && (
        <p class="notice" role="status">
          {message}
        </p>
      )}
    </div>
  );
}

import { useEffect, useMemo, useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { CommitConfirmStatus } from '../api/types';
import { ErrorAlert, messageOf } from '../components/error-alert';

function clock(seconds: number): string {
  const whole = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/**
 * An open commit-confirm window: a countdown to the automatic rollback and Confirm. The countdown runs from
 * the server's `seconds_remaining` (not its clock, which may differ from this computer's).
 */
export function CommitConfirmBar({ status, onDone }: { status: CommitConfirmStatus; onDone(): void }) {
  const { api, can } = useSession();
  // every status read restarts the countdown from its own seconds_remaining
  const receivedAt = useMemo(() => Date.now(), [status]);
  const [now, setNow] = useState(Date.now());
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, []);
  const remaining = status.seconds_remaining - (now - receivedAt) / 1000;

  useEffect(() => {
    // past the deadline the server has rolled back: ask it how that went
    if (remaining <= 0) onDone();
  }, [remaining <= 0]);

  const confirmChanges = async () => {
    setError(null);
    try {
      await api.post('/config/commit-confirm/confirm', {});
      onDone();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  return (
    <section class="banner commit-confirm" aria-label="Commit-confirm">
      <p>
        <strong>Commit-confirm:</strong> the applied changes roll back to version {status.rollback_version ?? '?'} in{' '}
        <span role="timer" aria-label="Time left to confirm">
          {clock(remaining)}
        </span>{' '}
        unless confirmed{status.auto_confirm ? ' (it confirms by itself once every assertion holds and this console is back)' : ''}.
      </p>
      {status.assertions && (
        <ul class="assertion-results" aria-label="Assertions after the apply">
          {status.assertions.state === 'running' && <li>Checking the assertions…</li>}
          {status.assertions.results.map((r) => (
            <li key={r.id} class={r.result.holds ? 'holds' : 'fails'}>
              {r.result.holds ? '✓' : '✗'} {r.name}: {r.result.detail}
            </li>
          ))}
        </ul>
      )}
      {can('backup:write') && (
        <button type="button" onClick={confirmChanges}>
          Confirm
        </button>
      )}
      <ErrorAlert message={error} />
    </section>
  );
}

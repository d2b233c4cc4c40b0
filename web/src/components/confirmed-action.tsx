import { useEffect, useRef, useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import { ErrorAlert, Notice, messageOf } from './error-alert';

/**
 * A drastic operation (reboot, shutdown) behind a confirmation step on the page itself: the first button only
 * asks, saying what will happen; the operation runs on the second. Offered only to an account holding `permission`.
 */
export function ConfirmedAction({ label, path, permission, consequence }: {
  label: string;
  /** The API path written out (`/updates/reboot`), so the console coverage test sees it. */
  path: string;
  permission: string;
  consequence: string;
}) {
  const { api, can } = useSession();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  // asking moves the keyboard focus to Cancel, the safe answer (the button that asked is gone)
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) cancel.current?.focus();
  }, [asking]);
  if (!can(permission)) return null;
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      const answer = await api.post<{ message?: string } | null>(path);
      setMessage(answer?.message ?? `${label}: requested.`);
      setAsking(false);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="confirmed-action">
      {!asking && (
        <button type="button" class="danger" onClick={() => { setMessage(null); setAsking(true); }}>
          {label}…
        </button>
      )}
      {asking && (
        <div role="group" aria-label={`Confirm: ${label}`} class="confirm">
          <p>{consequence}</p>
          <button type="button" class="danger" disabled={busy} onClick={run}>
            {label} now
          </button>
          <button type="button" class="secondary" ref={cancel} onClick={() => setAsking(false)}>
            Cancel
          </button>
        </div>
      )}
      <ErrorAlert message={error} />
      {message && <Notice>{message}</Notice>}
    </div>
  );
}

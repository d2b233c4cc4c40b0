import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import { ErrorAlert, messageOf } from '../components/error-alert';
import { FormActions, TextField } from '../components/fields';

interface TotpSetup {
  secret: string;
  otpauth_uri: string;
  /** data: URL of an SVG QR code, made by the API. */
  qr_code: string;
}

/**
 * Two-factor enrolment for the signed-in user: setup (QR code and secret), a first code to prove the app
 * works, then the recovery codes once. Disabling needs the current password.
 */
export function TotpEnrolment() {
  const { api, me } = useSession();
  const [enabled, setEnabled] = useState(me.totp_enabled);
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [recovery, setRecovery] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  const attempt = async (action: () => Promise<void>) => {
    setError(null);
    try {
      await action();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };

  if (me.auth_provider !== 'local') return <p class="help">Two-factor authentication is managed by your identity provider.</p>;

  if (recovery) {
    return (
      <div class="banner secret" aria-label="Recovery codes">
        <p>
          <strong>Two-factor authentication is on.</strong> Keep these recovery codes somewhere safe; each works once if you lose your
          authenticator. They are shown only now.
        </p>
        <ul class="recovery-codes">
          {recovery.map((value) => (
            <li key={value}>
              <code>{value}</code>
            </li>
          ))}
        </ul>
        <button type="button" class="secondary" onClick={() => setRecovery(null)}>
          Done
        </button>
      </div>
    );
  }

  if (enabled) {
    return (
      <form
        class="record-form"
        aria-label="Disable two-factor authentication"
        onSubmit={(event) => {
          event.preventDefault();
          void attempt(async () => {
            await api.post('/auth/totp/disable', { password });
            setEnabled(false);
            setPassword('');
          });
        }}
      >
        <h3>Two-factor authentication is on</h3>
        <TextField label="Current password" name="password" type="password" value={password} onInput={setPassword} autoComplete="current-password" />
        <ErrorAlert message={error} />
        <FormActions>
          <button type="submit" class="danger">
            Disable two-factor authentication
          </button>
        </FormActions>
      </form>
    );
  }

  if (!setup) {
    return (
      <div class="totp">
        <p>Two-factor authentication is off.</p>
        <ErrorAlert message={error} />
        <button type="button" onClick={() => attempt(async () => setSetup(await api.post<TotpSetup>('/auth/totp/setup')))}>
          Set up two-factor authentication
        </button>
      </div>
    );
  }

  return (
    <form
      class="record-form totp"
      aria-label="Two-factor enrolment"
      onSubmit={(event) => {
        event.preventDefault();
        void attempt(async () => {
          const verified = await api.post<{ recovery_codes: string[] }>('/auth/totp/verify', { code: code.trim() });
          setRecovery(verified.recovery_codes);
          setEnabled(true);
          setSetup(null);
          setCode('');
        });
      }}
    >
      <h3>Scan this code with your authenticator app</h3>
      <img src={setup.qr_code} alt="QR code of the two-factor secret" width={200} height={200} />
      <p>
        Or enter the secret by hand: <code class="secret-value">{setup.secret}</code>
      </p>
      <TextField label="Code from the app" name="code" value={code} onInput={setCode} inputMode="numeric" autoComplete="one-time-code" />
      <ErrorAlert message={error} />
      <FormActions>
        <button type="submit">Turn on two-factor authentication</button>
      </FormActions>
    </form>
  );
}

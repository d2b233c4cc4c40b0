import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type ApiClient, type TokenPair } from '../api/client';
import type { LoginAnswer, LoginOption, Me } from '../api/types';
import { ErrorAlert, messageOf } from '../components/error-alert';
import { FormActions, TextField } from '../components/fields';
import { useFocusInvalid } from '../components/use-submit';
import { oauthErrorMessage } from './oauth-errors';

type Step =
  | { kind: 'loading' }
  | { kind: 'register' }
  | { kind: 'password' }
  | { kind: 'totp'; challenge: string }
  | { kind: 'sso-totp'; ticket: string };

/** The fields of the sign-in forms a refusal can name. */
type SignInField = 'username' | 'password' | 'repeat' | 'code';

/** A refusal and the field it names; null names no field (a wrong password is never pinned on one of the two). */
interface Refusal {
  message: string;
  field: SignInField | null;
}

/** The body fields of /auth/register, /auth/login, /auth/totp/login and /auth/oauth/totp, as the form's fields. */
const BODY_FIELDS: Record<string, SignInField> = { username: 'username', password: 'password', code: 'code', totp_code: 'code' };

/** Thrown before anything is sent when the two new passwords differ. */
class RepeatMismatch extends Error {}

function refusalOf(failure: unknown): Refusal {
  if (failure instanceof RepeatMismatch) return { message: failure.message, field: 'repeat' };
  if (failure instanceof ApiError && failure.status === 401) return { message: failure.message.replace(/^./, (c) => c.toUpperCase()), field: null };
  const named = failure instanceof ApiError ? failure.fieldPath?.[0] : undefined;
  return { message: messageOf(failure), field: (named && BODY_FIELDS[named]) || null };
}

interface SignInProps {
  api: ApiClient;
  onSignedIn(me: Me): void;
}

/** What the single sign-on callback put in the address (`?oauth_error=` or `?oauth_totp=`), read once. */
function readRedirectParameters(): { error: string | null; ticket: string | null } {
  const params = new URLSearchParams(location.search);
  const error = params.get('oauth_error');
  const ticket = params.get('oauth_totp');
  // the ticket is single use and should not linger in history or be bookmarked
  if (error !== null || ticket !== null) history.replaceState(null, '', '/login');
  return { error, ticket };
}

/**
 * Sign-in: first-boot registration while no account exists, username and password, the TOTP step when the
 * account has it, single sign-on buttons for the enabled providers, and readable single sign-on failures.
 */
export function SignInPage({ api, onSignedIn }: SignInProps) {
  const [redirect] = useState(readRedirectParameters);
  const [step, setStep] = useState<Step>(() => (redirect.ticket ? { kind: 'sso-totp', ticket: redirect.ticket } : { kind: 'loading' }));
  const [providers, setProviders] = useState<LoginOption[]>([]);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [code, setCode] = useState('');
  const [refusal, setRefusal] = useState<Refusal | null>(redirect.error ? { message: oauthErrorMessage(redirect.error), field: null } : null);
  const [busy, setBusy] = useState(false);
  const form = useRef<HTMLFormElement>(null);
  /** The refusal's message at `field` when it names that field (the input marked invalid and described by it). */
  const errorAt = (field: SignInField) => (refusal?.field === field ? refusal.message : null);
  /** The refusal's message in the form's alert when it names no field of the form. */
  const alertMessage = refusal && refusal.field === null ? refusal.message : null;
  useFocusInvalid(form, refusal?.field ? refusal.message : null);

  useEffect(() => {
    if (redirect.error) api.forget(); // a single sign-on that failed left no session
    api.get<LoginOption[]>('/auth/oauth/login-options').then(setProviders, () => setProviders([]));
    if (step.kind !== 'loading') return;
    api.get<{ registration_open: boolean }>('/auth/register').then(
      (state) => setStep({ kind: state.registration_open ? 'register' : 'password' }),
      () => setStep({ kind: 'password' }),
    );
  }, []);

  const finish = async (tokens: TokenPair | null) => {
    if (tokens) api.useTokens(tokens);
    else api.useCookieSession();
    onSignedIn(await api.get<Me>('/auth/me'));
  };

  const attempt = async (event: Event, action: () => Promise<void>) => {
    event.preventDefault();
    setBusy(true);
    setRefusal(null);
    try {
      await action();
    } catch (failure) {
      setRefusal(refusalOf(failure));
    } finally {
      setBusy(false);
    }
  };

  const logIn = async () => {
    const answer = await api.post<LoginAnswer>('/auth/login', { username, password });
    setPassword('');
    if (answer.totp_required && answer.challenge) setStep({ kind: 'totp', challenge: answer.challenge });
    else await finish(answer as TokenPair);
  };

  const startSso = async (provider: LoginOption) => {
    setRefusal(null);
    try {
      const { authorize_url } = await api.get<{ authorize_url: string }>(`/auth/oauth/${encodeURIComponent(provider.name)}/authorize`);
      // the provider sends the browser back to `/` with session cookies: remember to look for them
      api.useCookieSession();
      location.assign(authorize_url);
    } catch (failure) {
      setRefusal({ message: messageOf(failure), field: null });
    }
  };

  return (
    <main class="sign-in">
      <h1>Bulwark</h1>
      {step.kind === 'loading' && <p>Loading…</p>}

      {step.kind === 'register' && (
        <form
          ref={form}
          aria-label="Create the administrator account"
          onSubmit={(event) =>
            attempt(event, async () => {
              if (password !== repeat) throw new RepeatMismatch('The two passwords differ.');
              await api.post('/auth/register', { username, password });
              await logIn();
            })
          }
        >
          <h2>First start: create the administrator account</h2>
          <p class="help">No account exists yet. The account you create now administers this appliance.</p>
          <TextField label="Username" name="username" value={username} onInput={setUsername} autoComplete="username" required error={errorAt('username')} />
          <TextField label="Password" name="password" type="password" value={password} onInput={setPassword} autoComplete="new-password" required error={errorAt('password')} />
          <TextField label="Repeat password" name="repeat" type="password" value={repeat} onInput={setRepeat} autoComplete="new-password" required error={errorAt('repeat')} />
          <ErrorAlert message={alertMessage} />
          <FormActions>
            <button type="submit" disabled={busy}>
              Create account and sign in
            </button>
          </FormActions>
        </form>
      )}

      {step.kind === 'password' && (
        <>
          <form ref={form} aria-label="Sign in" onSubmit={(event) => attempt(event, logIn)}>
            <h2>Sign in</h2>
            <TextField label="Username" name="username" value={username} onInput={setUsername} autoComplete="username" required error={errorAt('username')} />
            <TextField label="Password" name="password" type="password" value={password} onInput={setPassword} autoComplete="current-password" required error={errorAt('password')} />
            <ErrorAlert message={alertMessage} />
            <FormActions>
              <button type="submit" disabled={busy}>
                Sign in
              </button>
            </FormActions>
          </form>
          {providers.length > 0 && (
            <section class="sso" aria-label="Single sign-on">
              <h2>Or sign in with</h2>
              {providers.map((provider) => (
                <button key={provider.name} type="button" class="secondary" onClick={() => startSso(provider)}>
                  Sign in with {provider.name}
                </button>
              ))}
            </section>
          )}
        </>
      )}

      {(step.kind === 'totp' || step.kind === 'sso-totp') && (
        <form
          ref={form}
          aria-label="Two-factor code"
          onSubmit={(event) =>
            attempt(event, async () => {
              try {
                if (step.kind === 'totp') {
                  await finish(await api.post<TokenPair>('/auth/totp/login', { challenge: step.challenge, code: code.trim() }));
                } else {
                  await api.post('/auth/oauth/totp', { ticket: step.ticket, totp_code: code.trim() });
                  await finish(null);
                }
              } catch (failure) {
                // a wrong code spends the challenge (or the single sign-on ticket): start again from the password
                if (failure instanceof ApiError && failure.status === 401) {
                  setCode('');
                  setStep({ kind: 'password' });
                }
                throw failure;
              }
            })
          }
        >
          <h2>Two-factor code</h2>
          <p class="help">Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
          <TextField label="Code" name="code" value={code} onInput={setCode} inputMode="numeric" autoComplete="one-time-code" required error={errorAt('code')} />
          <ErrorAlert message={alertMessage} />
          <FormActions>
            <button type="submit" disabled={busy}>
              Verify
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setCode('');
                setRefusal(null);
                setStep({ kind: 'password' });
              }}
            >
              Back
            </button>
          </FormActions>
        </form>
      )}
    </main>
  );
}

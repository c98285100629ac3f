import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { useAction } from '../components/use-action.js';

type Mode = 'password' | 'code-request' | 'code-enter' | 'sign-up' | 'sign-up-code';

/** Email and password, or a one-time code by email; or a new account confirmed by a mailed code. */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [mode, setMode] = useState<Mode>('password');
  const [email, setEmail] = useState('');
  // Kept only in memory between sign-up and its code, to sign in once the address is confirmed.
  const [newPassword, setNewPassword] = useState('');
  const { busy, error, setError, run } = useAction();
  const field = (form: HTMLFormElement, name: string) => String(new FormData(form).get(name) ?? '');
  /** A form's submit: its work runs as the one action (busy, error), reading the form's fields. */
  const submit =
    (work: (form: HTMLFormElement) => Promise<void>) => (e: JSX.TargetedEvent<HTMLFormElement>) => {
      e.preventDefault();
      const form = e.currentTarget;
      void run(() => work(form));
    };

  return (
    <section aria-labelledby="sign-in-title" class="card">
      <h1 id="sign-in-title">{mode.startsWith('sign-up') ? 'Create an account' : 'Sign in'}</h1>
      {mode === 'sign-up' ? (
        <form
          onSubmit={submit(async (form) => {
            const to = field(form, 'email');
            const password = field(form, 'password');
            await api('POST', '/api/auth/sign-up/email', {
              email: to,
              password,
              name: field(form, 'name'),
            });
            setEmail(to);
            setNewPassword(password);
            setMode('sign-up-code');
          })}
        >
          <label>
            Name
            <input name="name" autocomplete="name" required />
          </label>
          <EmailField value={email} onInput={setEmail} />
          <label>
            Password (at least 8 characters)
            <input name="password" type="password" autocomplete="new-password" minLength={8} required />
          </label>
          <button type="submit" disabled={busy}>
            Create account
          </button>
        </form>
      ) : mode === 'sign-up-code' ? (
        <form
          onSubmit={submit(async (form) => {
            await api('POST', '/api/auth/otp/verify-email', { email, otp: field(form, 'otp').trim() });
            await api('POST', '/api/auth/sign-in/email', { email, password: newPassword });
            setNewPassword('');
            onSignedIn();
          })}
        >
          <p role="status">We sent a code to {email} to confirm the address. It works for 5 minutes.</p>
          <CodeField />
          <button type="submit" disabled={busy}>
            Confirm
          </button>
        </form>
      ) : mode === 'password' ? (
        <form
          onSubmit={submit(async (form) => {
            await api('POST', '/api/auth/sign-in/email', {
              email: field(form, 'email'),
              password: field(form, 'password'),
            });
            onSignedIn();
          })}
        >
          <EmailField value={email} onInput={setEmail} />
          <label>
            Password
            <input name="password" type="password" autocomplete="current-password" required />
          </label>
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </form>
      ) : mode === 'code-request' ? (
        <form
          onSubmit={submit(async (form) => {
            const to = field(form, 'email');
            await api('POST', '/api/auth/otp/send', { email: to, type: 'sign-in' });
            setEmail(to);
            setMode('code-enter');
          })}
        >
          <EmailField value={email} onInput={setEmail} />
          <button type="submit" disabled={busy}>
            Email me a code
          </button>
        </form>
      ) : (
        <form
          onSubmit={submit(async (form) => {
            await api('POST', '/api/auth/sign-in/email-otp', { email, otp: field(form, 'otp').trim() });
            onSignedIn();
          })}
        >
          <p role="status">If {email} has an account, a code is on its way. It works for 5 minutes.</p>
          <CodeField />
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </form>
      )}
      <ErrorMessage error={error} />
      {mode === 'password' ? (
        <p>
          New here?{' '}
          <button type="button" class="link" onClick={() => (setError(null), setMode('sign-up'))}>
            Create an account
          </button>
        </p>
      ) : null}
      <p>
        {mode === 'password' ? (
          <button type="button" class="link" onClick={() => (setError(null), setMode('code-request'))}>
            Sign in with a code by email instead
          </button>
        ) : (
          <button type="button" class="link" onClick={() => (setError(null), setMode('password'))}>
            Sign in with a password instead
          </button>
        )}
      </p>
    </section>
  );
}

/** The address, kept across the forms so that switching between them does not lose it. */
function EmailField({ value, onInput }: { value: string; onInput: (v: string) => void }) {
  return (
    <label>
      Email
      <input
        name="email"
        type="email"
        autocomplete="username"
        required
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    </label>
  );
}

function CodeField() {
  return (
    <label>
      Code
      <input name="otp" inputMode="numeric" autocomplete="one-time-code" required />
    </label>
  );
}

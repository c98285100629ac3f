import { useEffect, useRef, useState } from 'preact/hooks';
import { currentSession, onSignedOut, request, type Session } from './api.js';
import { href, useRoute } from './router.js';
import { SignIn } from './pages/sign-in.js';
import { NewGeneration } from './pages/new.js';
import { History } from './pages/history.js';
import { GenerationPage } from './pages/generation.js';
import { Settings } from './pages/settings.js';
import { DubPage } from './pages/dub.js';
import { BatchPage } from './pages/batch.js';
import { DialoguePage } from './pages/dialogue.js';
import { ErrorMessage } from './components/error-message.js';

const TITLES = {
  new: 'New',
  history: 'History',
  generation: 'Generation',
  settings: 'Settings',
  dub: 'Dub',
  edit: 'Edit',
  batch: 'Batch',
} as const;

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const route = useRoute();

  const refresh = () =>
    currentSession().then(
      (s) => setSession(s),
      (e) => {
        setError(e);
        setSession(null);
      },
    );
  useEffect(() => {
    void refresh();
    return onSignedOut(() => setSession(null));
  }, []);
  // A new page: its title names it, and focus moves to it so a screen reader announces the change
  // (not on the first load, where focus belongs at the top).
  const first = useRef(true);
  useEffect(() => {
    document.title = `${session === null ? 'Sign in' : TITLES[route.name]} · Lip-sync studio`;
    if (first.current) {
      first.current = false;
      return;
    }
    document.getElementById('main')?.focus();
  }, [route.name, route.id, session === null]);

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null)
    return (
      <main id="main" class="narrow">
        <ErrorMessage error={error} />
        <SignIn onSignedIn={refresh} />
      </main>
    );

  const signOut = async () => {
    await request('POST', '/api/auth/sign-out', {}).catch(() => undefined);
    setSession(null);
  };
  const current = (name: string) => (route.name === name ? 'page' : undefined);
  return (
    <>
      <a
        class="skip"
        href="#main"
        onClick={(e) => (e.preventDefault(), document.getElementById('main')?.focus())}
      >
        Skip to content
      </a>
      <header class="top">
        <strong class="brand">Lip-sync studio</strong>
        <nav aria-label="Studio">
          <a href={href('')} aria-current={current('new')}>
            New
          </a>
          <a href={href('history')} aria-current={current('history') ?? current('generation')}>
            History
          </a>
          <a href={href('dub')} aria-current={current('dub')}>
            Dub
          </a>
          <a href={href('edit')} aria-current={current('edit')}>
            Edit
          </a>
          <a href={href('batch')} aria-current={current('batch')}>
            Batch
          </a>
          <a href={href('settings')} aria-current={current('settings')}>
            Settings
          </a>
        </nav>
        <span class="who">
          {session.user.email}
          {session.organization ? ` · ${session.organization.name} (${session.role})` : ''}
        </span>
        <button type="button" class="link" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {session.organization?.draft ? (
          <div class="error" role="alert">
            <p>Your organization is waiting for the operator to activate it.</p>
            <p class="suggestion">Ask them to run: lipsync org update {session.organization.id} --no-draft</p>
          </div>
        ) : route.name === 'history' ? (
          <History route={route} />
        ) : route.name === 'generation' ? (
          <GenerationPage id={route.id!} />
        ) : route.name === 'dub' ? (
          <DubPage id={route.id} />
        ) : route.name === 'edit' ? (
          <DialoguePage />
        ) : route.name === 'batch' ? (
          <BatchPage route={route} />
        ) : route.name === 'settings' ? (
          <Settings session={session} route={route} />
        ) : (
          <NewGeneration route={route} />
        )}
      </main>
    </>
  );
}

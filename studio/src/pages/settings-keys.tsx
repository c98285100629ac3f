// API keys: create (the secret shown once), rename in place, revoke after a confirmation. The server
// lists what the role may see: a member only the keys it created, admins and owners every key.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { api, get, type Session } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { useAction } from '../components/use-action.js';
import type { ApiKeyRow, CreatedApiKey, Member } from '../types.js';
import { Confirm, RoleOptions, roleOf, when } from './settings-common.js';

const EXPIRY: { label: string; days: number | null }[] = [
  { label: 'Never', days: null },
  { label: 'In 30 days', days: 30 },
  { label: 'In 90 days', days: 90 },
  { label: 'In one year', days: 365 },
];

export function KeysSection({ session, members }: { session: Session; members: Member[] | null }) {
  const role = roleOf(session.role);
  const [keys, setKeys] = useState<ApiKeyRow[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [status, setStatus] = useState('');

  const load = () =>
    get<ApiKeyRow[]>('/v2/api-keys').then(
      (k) => setKeys(k),
      (e) => setError(e),
    );
  useEffect(() => void load(), []);

  const creator = (k: ApiKeyRow) => {
    if (k.createdByUserId === session.user.id) return 'you';
    if (k.createdByUserId)
      return members?.find((m) => m.userId === k.createdByUserId)?.email ?? 'a former member';
    return 'an API key or the operator';
  };

  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p class="muted">
        {role === 'member'
          ? 'As a member you see and manage only the keys you created.'
          : 'As an ' + role + ' you see and manage every key of the organization.'}{' '}
        A key acts with its role; you can give a key your own role or a lower one.
      </p>
      <CreateKeyForm
        role={role}
        onCreated={(k) => {
          setCreated(k);
          setStatus('');
          void load();
        }}
      />
      {created ? <NewKey created={created} onDone={() => setCreated(null)} /> : null}
      <p role="status" class="muted">
        {status}
      </p>
      <ErrorMessage error={error} />
      {keys === null ? (
        <p class="muted">Loading keys…</p>
      ) : keys.length === 0 ? (
        <p class="muted">No keys yet.</p>
      ) : (
        <table>
          <caption class="sr-only">API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <KeyRow
                key={k.id}
                k={k}
                creator={creator(k)}
                onChanged={(message) => {
                  setStatus(message);
                  void load();
                }}
              />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function CreateKeyForm(props: { role: ReturnType<typeof roleOf>; onCreated: (k: CreatedApiKey) => void }) {
  const { busy, error, run } = useAction();
  return (
    <form
      class="card settings-form"
      aria-labelledby="create-key-title"
      onSubmit={(e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const data = new FormData(form);
        const days = Number(data.get('expiry'));
        void run(async () => {
          const k = await api<CreatedApiKey>('POST', '/v2/api-keys', {
            name: String(data.get('name') ?? ''),
            role: String(data.get('role') ?? 'member'),
            expiresAt: days > 0 ? new Date(Date.now() + days * 86_400_000).toISOString() : null,
          });
          form.reset();
          props.onCreated(k);
        });
      }}
    >
      <h3 id="create-key-title">Create a key</h3>
      <div class="row">
        <label>
          Key name
          <input name="name" maxLength={200} required placeholder="e.g. render server" />
        </label>
        <label>
          Key role
          <select name="role" defaultValue="member">
            <RoleOptions actor={props.role} />
          </select>
        </label>
        <label>
          Expires
          <select name="expiry" defaultValue="0">
            {EXPIRY.map((x) => (
              <option key={x.label} value={String(x.days ?? 0)}>
                {x.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <button type="submit" disabled={busy}>
        Create key
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}

/** The secret, once: a read-only field that takes the focus, selected, with a copy button. */
function NewKey({ created, onDone }: { created: CreatedApiKey; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState('');
  // The focus moves as the content renders (not a frame later), so that keys typed at once land here.
  useLayoutEffect(() => {
    field.current?.focus();
    field.current?.select();
  }, [created.key]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      setCopied('Copied to the clipboard.');
    } catch {
      field.current?.select();
      setCopied('Copying is not allowed here: the key is selected, press Ctrl+C (or ⌘C).');
    }
  };
  return (
    <div class="card new-key" role="region" aria-labelledby="new-key-title">
      <h3 id="new-key-title">Key “{created.name}” created</h3>
      <p>
        <strong>Copy it now: you will not see it again.</strong> Only its prefix ({created.prefix}…) is kept
        for display.
      </p>
      <label>
        New API key
        <input ref={field} readOnly value={created.key} class="mono" spellcheck={false} />
      </label>
      <button type="button" onClick={copy}>
        Copy key
      </button>{' '}
      <button type="button" class="secondary" onClick={onDone}>
        I have copied it
      </button>
      <p role="status" class="muted">
        {copied}
      </p>
    </div>
  );
}

function KeyRow(props: { k: ApiKeyRow; creator: string; onChanged: (message: string) => void }) {
  const { k } = props;
  const [mode, setMode] = useState<'view' | 'rename' | 'revoke'>('view');
  const { busy, error, run } = useAction();
  const active = k.status === 'active';
  // Where the focus goes when the row's form or question closes (keyboard users keep their place).
  const renameButton = useRef<HTMLButtonElement>(null);
  const revokeButton = useRef<HTMLButtonElement>(null);
  const nameCell = useRef<HTMLTableCellElement>(null);
  const focusNext = useRef<{ current: HTMLElement | null } | null>(null);
  // Layout effects, here and in RenameForm and Confirm: the element that had the focus is removed by
  // the render, so the focus must move within it, before the next key arrives.
  useLayoutEffect(() => {
    if (mode !== 'view' || !focusNext.current) return;
    focusNext.current.current?.focus();
    focusNext.current = null;
  }, [mode]);
  const leave = (to: { current: HTMLElement | null }) => {
    focusNext.current = to;
    setMode('view');
  };

  const act = (work: () => Promise<unknown>, message: string, to: { current: HTMLElement | null }) =>
    void run(async () => {
      await work();
      leave(to);
      props.onChanged(message);
    });

  return (
    <tr class={active ? undefined : 'inactive'}>
      <td ref={nameCell} tabIndex={-1}>
        {mode === 'rename' ? (
          <RenameForm
            k={k}
            busy={busy}
            onSave={(name) =>
              act(
                () => api('PATCH', `/v2/api-keys/${k.id}`, { name }),
                `Key renamed to “${name}”.`,
                renameButton,
              )
            }
            onCancel={() => leave(renameButton)}
          />
        ) : (
          <>
            {k.name}
            <div class="muted small">by {props.creator}</div>
          </>
        )}
        <ErrorMessage error={error} />
      </td>
      <td>
        <code>{k.prefix}…</code>
      </td>
      <td>{k.role}</td>
      <td>{when(k.createdAt)}</td>
      <td>{when(k.lastUsedAt, 'never')}</td>
      <td>{when(k.expiresAt, 'never')}</td>
      <td>{k.status}</td>
      <td class="actions">
        {!active ? null : mode === 'revoke' ? (
          <Confirm
            question={`Revoke “${k.name}”? Programs using it stop working at once.`}
            confirmLabel="Revoke key"
            busy={busy}
            onConfirm={() =>
              act(() => api('DELETE', `/v2/api-keys/${k.id}`), `Key “${k.name}” revoked.`, nameCell)
            }
            onCancel={() => leave(revokeButton)}
          />
        ) : mode === 'view' ? (
          <>
            <button
              ref={renameButton}
              type="button"
              class="secondary"
              aria-label={`Rename ${k.name}`}
              onClick={() => setMode('rename')}
            >
              Rename
            </button>{' '}
            <button
              ref={revokeButton}
              type="button"
              class="danger"
              aria-label={`Revoke ${k.name}`}
              onClick={() => setMode('revoke')}
            >
              Revoke
            </button>
          </>
        ) : null}
      </td>
    </tr>
  );
}

function RenameForm(props: {
  k: ApiKeyRow;
  busy: boolean;
  onSave: (name: string) => void;
  onCancel: () => void;
}) {
  const [name, setName] = useState(props.k.name);
  const input = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  return (
    <form
      class="inline"
      onSubmit={(e) => {
        e.preventDefault();
        props.onSave(name.trim());
      }}
      onKeyDown={(e) => e.key === 'Escape' && props.onCancel()}
    >
      <label>
        <span class="sr-only">New name for {props.k.name}</span>
        <input
          ref={input}
          value={name}
          maxLength={200}
          required
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={props.busy}>
        Save
      </button>{' '}
      <button type="button" class="secondary" onClick={props.onCancel}>
        Cancel
      </button>
    </form>
  );
}

// Members and roles: the list, invitations by email, role changes and removal (admins and owners;
// an admin never makes, changes or removes an owner; the server keeps the last owner).
import { useRef, useState } from 'preact/hooks';
import { api, type Session } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { useAction } from '../components/use-action.js';
import type { Invitation, Member, Role } from '../types.js';
import { Confirm, focusHeading, RoleOptions, when } from './settings-common.js';

export function MembersSection(props: {
  session: Session;
  role: Role;
  members: Member[] | null;
  error: unknown;
  reload: () => void;
}) {
  const { role, members } = props;
  const [status, setStatus] = useState('');
  const manages = role !== 'member';
  return (
    <section aria-labelledby="members-title">
      <h2 id="members-title">Members</h2>
      <p class="muted">
        Owners manage everything, admins manage keys and members up to admin, members use the studio and their
        own keys.{' '}
        {manages ? null : 'Only admins and owners can see the other members, invite people or change roles.'}
      </p>
      {manages ? (
        <InviteForm
          role={role}
          onInvited={(i) =>
            setStatus(
              i.delivery === 'email'
                ? `Invitation mailed to ${i.email} as ${i.role}; the link works until ${when(i.expiresAt)}.`
                : `No mail server is configured: the invitation link for ${i.email} is in the server log. Ask the operator to pass it on (it works until ${when(i.expiresAt)}).`,
            )
          }
        />
      ) : null}
      <p role="status" class="muted">
        {status}
      </p>
      <ErrorMessage error={props.error} />
      {members === null ? (
        props.error ? null : (
          <p class="muted">Loading members…</p>
        )
      ) : (
        <table>
          <caption class="sr-only">Members</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              {manages ? (
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <MemberRow
                key={m.userId}
                m={m}
                you={m.userId === props.session.user.id}
                role={role}
                onChanged={(message) => {
                  setStatus(message);
                  props.reload();
                }}
              />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function InviteForm(props: { role: Role; onInvited: (i: Invitation) => void }) {
  const { busy, error, run } = useAction();
  return (
    <form
      class="card settings-form"
      aria-labelledby="invite-title"
      onSubmit={(e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const data = new FormData(form);
        void run(async () => {
          const i = await api<Invitation>('POST', '/v2/organizations/invitations', {
            email: String(data.get('email') ?? ''),
            role: String(data.get('role') ?? 'member'),
          });
          form.reset();
          props.onInvited(i);
        });
      }}
    >
      <h3 id="invite-title">Invite someone</h3>
      <div class="row">
        <label>
          Email to invite
          <input name="email" type="email" required autocomplete="off" />
        </label>
        <label>
          Role of the invitee
          <select name="role" defaultValue="member">
            <RoleOptions actor={props.role} />
          </select>
        </label>
      </div>
      <p class="muted small">They get a link that works once, for 24 hours, to make their account.</p>
      <button type="submit" disabled={busy}>
        Send invitation
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}

function MemberRow(props: { m: Member; you: boolean; role: Role; onChanged: (message: string) => void }) {
  const { m, role } = props;
  const [next, setNext] = useState<Role>(m.role);
  const [removing, setRemoving] = useState(false);
  const { busy, error, run } = useAction();
  const manages = role !== 'member';
  // An admin cannot touch an owner (the server refuses it too).
  const editable = manages && !(role === 'admin' && m.role === 'owner');
  const who = props.you ? `${m.email} (you)` : m.email;

  const select = useRef<HTMLSelectElement>(null);
  const removeButton = useRef<HTMLButtonElement>(null);
  // A closed question gives the focus back to its button; a removed row to the section's heading.
  const cancelRemoval = () => {
    setRemoving(false);
    setTimeout(() => removeButton.current?.focus());
  };
  const act = (work: () => Promise<unknown>, message: string, then: () => void) =>
    void run(async () => {
      await work();
      setRemoving(false);
      props.onChanged(message);
      then();
    });

  return (
    <tr>
      <td>{who}</td>
      <td>{m.name}</td>
      <td>
        {editable ? (
          <form
            class="inline"
            onSubmit={(e) => {
              e.preventDefault();
              act(
                () => api('PATCH', `/v2/organizations/members/${m.userId}`, { role: next }),
                `${m.email} is now ${next}.`,
                () => select.current?.focus(),
              );
            }}
          >
            <label>
              <span class="sr-only">Role of {m.email}</span>
              <select ref={select} value={next} onChange={(e) => setNext(e.currentTarget.value as Role)}>
                <RoleOptions actor={role} />
              </select>
            </label>{' '}
            <button type="submit" class="secondary" disabled={busy || next === m.role}>
              Change role
            </button>
          </form>
        ) : (
          m.role
        )}
        <ErrorMessage error={error} />
      </td>
      <td>{when(m.joinedAt)}</td>
      {manages ? (
        <td class="actions">
          {!editable ? null : removing ? (
            <Confirm
              question={`Remove ${who}? Their sessions end and the keys they created are revoked.`}
              confirmLabel="Remove member"
              busy={busy}
              onConfirm={() =>
                act(
                  () => api('DELETE', `/v2/organizations/members/${m.userId}`),
                  `${m.email} was removed.`,
                  () => focusHeading('members-title'),
                )
              }
              onCancel={cancelRemoval}
            />
          ) : (
            <button
              ref={removeButton}
              type="button"
              class="danger"
              aria-label={`Remove ${m.email}`}
              onClick={() => setRemoving(true)}
            >
              Remove
            </button>
          )}
        </td>
      ) : null}
    </tr>
  );
}

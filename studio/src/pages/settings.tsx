import { useEffect, useState } from 'preact/hooks';
import { get, type Session } from '../api.js';
import type { Route } from '../router.js';
import type { Member } from '../types.js';
import { focusHeading, roleOf } from './settings-common.js';
import { KeysSection } from './settings-keys.js';
import { MembersSection } from './settings-members.js';
import { UsageSection } from './settings-usage.js';
import { WebhookSecretSection } from './settings-webhook.js';

/**
 * The organization's settings: API keys, the webhook secret, members and usage. What a section
 * offers follows the role (the server enforces the same rules): a member sees only its own keys and
 * manages no one.
 */
export function Settings({ session }: { session: Session; route: Route }) {
  const role = roleOf(session.role);
  const [members, setMembers] = useState<Member[] | null>(null);
  const [membersError, setMembersError] = useState<unknown>(null);
  const loadMembers = () =>
    get<Member[]>('/v2/organizations/members').then((m) => {
      setMembers(m);
      setMembersError(null);
    }, setMembersError);
  useEffect(() => void loadMembers(), []);

  return (
    <section aria-labelledby="settings-title" class="settings">
      <h1 id="settings-title">Settings</h1>
      <p class="muted">
        {session.organization?.name} · you are <strong>{role}</strong>
      </p>
      <nav aria-label="Settings sections" class="settings-nav">
        {/* In-page jumps by focus, not by hash: the hash holds the studio's route. */}
        {[
          ['keys-title', 'API keys'],
          ['webhook-title', 'Webhook secret'],
          ['members-title', 'Members'],
          ['usage-title', 'Usage'],
        ].map(([id, label]) => (
          <button key={id} type="button" class="link" onClick={() => focusHeading(id!)}>
            {label}
          </button>
        ))}
      </nav>
      <KeysSection session={session} members={members} />
      <WebhookSecretSection role={role} />
      <MembersSection
        session={session}
        role={role}
        members={members}
        error={membersError}
        reload={() => void loadMembers()}
      />
      <UsageSection />
    </section>
  );
}

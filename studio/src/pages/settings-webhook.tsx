// The webhook signing secret (admins and owners): masked until "Show", copyable, rotatable after a
// confirmation. Members are told who can see it.
import { useEffect, useState } from 'preact/hooks';
import { api, get } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { useAction } from '../components/use-action.js';
import type { Role } from '../types.js';
import { Confirm } from './settings-common.js';

export function WebhookSecretSection({ role }: { role: Role }) {
  return (
    <section aria-labelledby="webhook-title">
      <h2 id="webhook-title">Webhook secret</h2>
      <p class="muted">
        Webhooks are signed with this secret (HMAC-SHA256 in the <code>Webhook-Signature</code> header): check
        it in your receiver.
      </p>
      {role === 'member' ? <p>Only admins and owners can see or rotate the webhook secret.</p> : <Secret />}
    </section>
  );
}

function Secret() {
  const [masked, setMasked] = useState<string | null>(null);
  const [whole, setWhole] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const { busy, error, setError, run } = useAction();
  const [status, setStatus] = useState('');

  const loadMasked = () =>
    get<{ secret: string }>('/v2/organizations/webhook/secret?masked=true').then(
      (s) => setMasked(s.secret),
      setError,
    );
  useEffect(() => void loadMasked(), []);

  const show = () => {
    setError(null);
    get<{ secret: string }>('/v2/organizations/webhook/secret?masked=false').then(
      (s) => setWhole(s.secret),
      setError,
    );
  };
  const copy = async () => {
    if (!whole) return;
    try {
      await navigator.clipboard.writeText(whole);
      setStatus('Secret copied to the clipboard.');
    } catch {
      setStatus('Copying is not allowed here: select the secret and copy it.');
    }
  };
  const rotate = () =>
    void run(async () => {
      const s = await api<{ secret: string }>('POST', '/v2/organizations/webhook/secret/rotate', {});
      setWhole(s.secret);
      setConfirming(false);
      setStatus('A new secret is in use; deliveries from now on are signed with it.');
      void loadMasked();
    });

  return (
    <div class="card">
      <p>
        Signing secret{whole ? '' : ' (masked)'}: <code class="secret">{whole ?? masked ?? '…'}</code>
      </p>
      {whole ? (
        <>
          <button type="button" class="secondary" onClick={() => setWhole(null)}>
            Hide secret
          </button>{' '}
          <button type="button" onClick={copy}>
            Copy secret
          </button>
        </>
      ) : (
        <button type="button" class="secondary" onClick={show}>
          Show secret
        </button>
      )}{' '}
      {confirming ? (
        <Confirm
          question="Rotate the secret? Receivers that check the old one reject deliveries until they get the new one."
          confirmLabel="Rotate secret"
          busy={busy}
          onConfirm={rotate}
          onCancel={() => setConfirming(false)}
        />
      ) : (
        <button type="button" class="danger" onClick={() => setConfirming(true)}>
          Rotate…
        </button>
      )}
      <p role="status" class="muted">
        {status}
      </p>
      <ErrorMessage error={error} />
    </div>
  );
}

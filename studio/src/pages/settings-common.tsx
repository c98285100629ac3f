// Small pieces the settings sections share: role ranks, dates, and an inline confirmation.
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { Role } from '../types.js';

const RANK: Record<Role, number> = { owner: 3, admin: 2, member: 1 };
export const ROLES: Role[] = ['member', 'admin', 'owner'];

/** The server's rule (canGrantRole): nobody grants a role above its own. */
function grantable(actor: Role): Role[] {
  return ROLES.filter((r) => RANK[r] <= RANK[actor]);
}

/** The roles `actor` may give, as a select's options. */
export function RoleOptions({ actor }: { actor: Role }) {
  return (
    <>
      {grantable(actor).map((r) => (
        <option key={r} value={r}>
          {r}
        </option>
      ))}
    </>
  );
}

export function roleOf(role: string | null | undefined): Role {
  return role === 'owner' || role === 'admin' ? role : 'member';
}

export function when(iso: string | null | undefined, none = '—'): string {
  if (!iso) return none;
  const d = new Date(iso);
  return Number.isNaN(d.getTime())
    ? iso
    : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * "Are you sure?" in place (no modal): the question is announced, the confirming button takes the
 * focus, Escape or Cancel goes back.
 */
export function Confirm(props: {
  question: string;
  confirmLabel: string;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const button = useRef<HTMLButtonElement>(null);
  // As it renders, not after the next frame (useEffect): the button that opened the question is gone,
  // and an Escape pressed before a late frame (a busy machine) would reach no handler.
  useLayoutEffect(() => button.current?.focus(), []);
  return (
    <div
      class="confirm"
      role="group"
      aria-label={props.question}
      onKeyDown={(e) => e.key === 'Escape' && props.onCancel()}
    >
      <span role="alert">{props.question}</span>{' '}
      <button ref={button} type="button" class="danger" disabled={props.busy} onClick={props.onConfirm}>
        {props.confirmLabel}
      </button>{' '}
      <button type="button" class="secondary" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}

/** Moves the focus to a heading (made focusable for it), e.g. after the row that had it went away. */
export function focusHeading(id: string): void {
  const h = document.getElementById(id);
  if (!h) return;
  h.setAttribute('tabindex', '-1');
  h.scrollIntoView({ block: 'nearest' });
  h.focus();
}

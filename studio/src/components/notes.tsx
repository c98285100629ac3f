// Review notes on a result: markers on a timeline under the player (a click or Enter seeks there), a
// form that pins a note to the current moment, and the list beside it to edit, resolve or delete.
import { useEffect, useState } from 'preact/hooks';
import { api, get } from '../api.js';
import type { Note } from '../types.js';
import type { PlayerControl } from './compare.js';
import { ErrorMessage } from './error-message.js';

/** 83.5 s as 1:23.50. */
export function clock(seconds: number): string {
  const m = Math.floor(seconds / 60);
  return `${m}:${(seconds - m * 60).toFixed(2).padStart(5, '0')}`;
}

const byMoment = (a: Note, b: Note) => a.atMs - b.atMs || a.createdAt.localeCompare(b.createdAt);

export function Notes({
  generationId,
  player,
  lengthSeconds,
}: {
  generationId: string;
  player: PlayerControl;
  /** The output's stored length, until the player knows its own. */
  lengthSeconds: number | null;
}) {
  const path = `/v2/generations/${encodeURIComponent(generationId)}/notes`;
  const [notes, setNotes] = useState<Note[] | null>(null);
  const [text, setText] = useState('');
  const [said, setSaid] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const length = player.duration ?? lengthSeconds ?? 0;

  useEffect(() => {
    get<Note[]>(path).then(setNotes, setError);
  }, [path]);

  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const replace = (n: Note) => setNotes((old) => (old ?? []).map((o) => (o.id === n.id ? n : o)));

  const add = (e: Event) => {
    e.preventDefault();
    const atMs = Math.round(player.time * 1000);
    void act(async () => {
      const n = await api<Note>('POST', path, { atMs, text });
      setNotes((old) => [...(old ?? []), n].sort(byMoment));
      setText('');
      setSaid(`Note added at ${clock(n.atMs / 1000)}.`);
    });
  };

  const list = notes ?? [];
  return (
    <section class="notes" aria-labelledby="notes-title">
      <h3 id="notes-title">Notes</h3>
      <div class="notes-track" role="group" aria-label="Notes timeline">
        <span class="notes-playhead" aria-hidden="true" style={{ left: `${pct(player.time, length)}%` }} />
        {list.map((n) => (
          <button
            key={n.id}
            type="button"
            class={`notes-marker${n.resolved ? ' resolved' : ''}`}
            style={{ left: `${pct(n.atMs / 1000, length)}%` }}
            aria-label={`Go to the note at ${clock(n.atMs / 1000)}: ${n.text}`}
            title={n.text}
            onClick={() => player.seek(n.atMs / 1000)}
          />
        ))}
      </div>
      <div class="notes-body">
        <form class="notes-add" onSubmit={add}>
          <label>
            Note at {clock(player.time)}
            <textarea
              rows={2}
              maxLength={2000}
              value={text}
              onInput={(e) => setText(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={busy || !text.trim()}>
            Add note
          </button>
        </form>
        {notes && !list.length ? <p class="muted notes-list">No notes yet.</p> : null}
        <ol class="notes-list" aria-label="Notes list" hidden={!list.length}>
          {list.map((n) => (
            <NoteItem
              key={n.id}
              note={n}
              path={`${path}/${encodeURIComponent(n.id)}`}
              onSeek={() => player.seek(n.atMs / 1000)}
              onChanged={replace}
              onDeleted={() => {
                setNotes((old) => (old ?? []).filter((o) => o.id !== n.id));
                setSaid(`Note at ${clock(n.atMs / 1000)} deleted.`);
              }}
              onSaid={setSaid}
            />
          ))}
        </ol>
      </div>
      <p role="status" aria-live="polite" class="muted">
        {said}
      </p>
      <ErrorMessage error={error} />
    </section>
  );
}

function pct(seconds: number, length: number): number {
  return length > 0 ? Math.min(100, Math.max(0, (seconds / length) * 100)) : 0;
}

function NoteItem({
  note,
  path,
  onSeek,
  onChanged,
  onDeleted,
  onSaid,
}: {
  note: Note;
  path: string;
  onSeek: () => void;
  onChanged: (n: Note) => void;
  onDeleted: () => void;
  onSaid: (s: string) => void;
}) {
  const [editing, setEditing] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const at = clock(note.atMs / 1000);
  const send = async (body: Record<string, unknown>, words: string) => {
    setError(null);
    try {
      onChanged(await api<Note>('PATCH', path, body));
      setEditing(null);
      onSaid(words);
    } catch (e) {
      setError(e);
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await api('DELETE', path);
      onDeleted();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <li class={note.resolved ? 'resolved' : undefined}>
      <button type="button" class="link" onClick={onSeek} aria-label={`Go to ${at}`}>
        {at}
      </button>{' '}
      {editing === null ? (
        <span class="notes-text">{note.text}</span>
      ) : (
        <label>
          <span class="sr-only">Text of the note at {at}</span>
          <textarea
            rows={2}
            maxLength={2000}
            value={editing}
            onInput={(e) => setEditing(e.currentTarget.value)}
          />
        </label>
      )}
      <span class="muted notes-author">
        {note.author}
        {note.resolved ? ' · resolved' : ''}
      </span>
      <span class="notes-actions">
        {editing === null ? (
          <>
            <button type="button" class="secondary" onClick={() => setEditing(note.text)}>
              Edit<span class="sr-only"> the note at {at}</span>
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() =>
                send(
                  { resolved: !note.resolved },
                  `Note at ${at} ${note.resolved ? 'reopened' : 'resolved'}.`,
                )
              }
            >
              {note.resolved ? 'Reopen' : 'Resolve'}
              <span class="sr-only"> the note at {at}</span>
            </button>
            <button type="button" class="secondary" onClick={remove}>
              Delete<span class="sr-only"> the note at {at}</span>
            </button>
          </>
        ) : (
          <>
            <button
              type="button"
              disabled={!editing.trim()}
              onClick={() => send({ text: editing }, `Note at ${at} saved.`)}
            >
              Save
            </button>
            <button type="button" class="secondary" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </>
        )}
      </span>
      <ErrorMessage error={error} />
    </li>
  );
}

// The dialogue editor (#/edit): transcribe a video, change or remove words, preview the edited speech
// (POST /v2/dialogue-edits, a session may narrow the window), then render it (POST /v2/generate with
// dialogueEdit). Refusals name words or a section: those words are marked where they sit. Before editing,
// "Correct the transcript" fixes words the recognizer misheard (PATCH /v2/transcriptions/{id}): the
// corrected words stay the recording's own sound, while a change is spoken anew.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, get } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { MediaPicker } from '../components/media-picker.js';
import { navigate } from '../router.js';
import type { Asset, DialogueEditJob, DialogueOperation, Generation, Transcription } from '../types.js';
import { DialoguePreview } from './dialogue-preview.js';
import { decodePeaks, selectedRange, Timeline, TranscriptWords, type Selection } from './dialogue-words.js';
import { uuid } from './new-request.js';

const RUNNING = new Set(['PENDING', 'PROCESSING']);

/** Polls a job until it leaves PENDING/PROCESSING; stops (returns null) once `alive` says so. */
async function settle<T extends { status: string }>(path: string, alive: () => boolean): Promise<T | null> {
  for (;;) {
    const job = await get<T>(path);
    if (!alive()) return null;
    if (!RUNNING.has(job.status)) return job;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Which edits a field such as `edits[2].wordIds[0]` names. */
function editOfField(field: string | undefined): number | null {
  const m = field ? /^edits\[(\d+)\]/.exec(field) : null;
  return m ? Number(m[1]) : null;
}

export function DialoguePage() {
  const [video, setVideo] = useState<Asset | null>(null);
  const [transcription, setTranscription] = useState<Transcription | null>(null);
  const [ops, setOps] = useState<DialogueOperation[]>([]);
  const [selection, setSelection] = useState<Selection | null>(null);
  const [text, setText] = useState('');
  const [win, setWin] = useState<{ startMs: number | null; endMs: number | null }>({
    startMs: null,
    endMs: null,
  });
  const [preview, setPreview] = useState<DialogueEditJob | null>(null);
  const [busy, setBusy] = useState<'transcribing' | 'correcting' | 'previewing' | 'rendering' | null>(null);
  const [mode, setMode] = useState<'edit' | 'correct'>('edit');
  const [corrected, setCorrected] = useState<Set<string>>(new Set());
  const [error, setError] = useState<unknown>(null);
  const [flagged, setFlagged] = useState<Set<string>>(new Set());
  const [peaks, setPeaks] = useState<Float32Array | null>(null);
  const [playheadMs, setPlayheadMs] = useState(0);
  const player = useRef<HTMLVideoElement>(null);
  const mounted = useRef(true);
  const attempt = useRef<{ body: string; key: string } | null>(null);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );

  const words = transcription?.transcript?.segments.flatMap((s) => s.words) ?? [];
  const durationMs = Math.max(1, (video?.durationSeconds ?? 0) * 1000, words.at(-1)?.endMs ?? 0);
  const range = selectedRange(selection);
  const chosen = range ? words.slice(range[0], range[1] + 1) : [];

  useEffect(() => {
    setPeaks(null);
    if (transcription?.sourceVideoUrl)
      void decodePeaks(transcription.sourceVideoUrl).then((p) => mounted.current && setPeaks(p));
  }, [transcription?.sourceVideoUrl]);

  useEffect(() => {
    setText(chosen.length === 1 ? chosen[0]!.text : '');
  }, [range?.[0], range?.[1]]);

  const choose = (a: Asset | null) => {
    setVideo(a);
    setTranscription(null);
    setOps([]);
    setSelection(null);
    setPreview(null);
    setError(null);
    setMode('edit');
    setCorrected(new Set());
  };

  const transcribe = async () => {
    if (!video) return;
    setError(null);
    setBusy('transcribing');
    try {
      const t = await api<Transcription>('POST', '/v2/transcriptions', { assetId: video.id });
      const done = await settle<Transcription>(
        `/v2/transcriptions/${encodeURIComponent(t.id)}`,
        () => mounted.current,
      );
      if (!done) return;
      if (done.status === 'FAILED')
        setError(
          new ApiError(done.error?.message ?? 'The transcription failed.', 0, done.error?.code ?? undefined),
        );
      setTranscription(done);
    } catch (err) {
      setError(err);
    } finally {
      if (mounted.current) setBusy(null);
    }
  };

  /** Replaces whatever edits touch the selection with `op` (or with nothing, to undo). */
  const apply = (op: DialogueOperation[]) => {
    const ids = new Set(chosen.map((w) => w.id));
    const kept = ops.filter((o) =>
      o.kind === 'change' ? !ids.has(o.wordId) : !o.wordIds.some((i) => ids.has(i)),
    );
    const order = new Map(words.map((w, i) => [w.id, i]));
    const first = (o: DialogueOperation) => order.get(o.kind === 'change' ? o.wordId : o.wordIds[0]!) ?? 0;
    setOps([...kept, ...op].sort((a, b) => first(a) - first(b)));
    setPreview(null);
    setFlagged(new Set());
  };
  const replace = () => {
    const replacement = text.trim();
    if (!chosen.length || !replacement) return;
    const [head, ...rest] = chosen;
    apply([
      { kind: 'change', wordId: head!.id, replacement },
      ...(rest.length ? [{ kind: 'remove' as const, wordIds: rest.map((w) => w.id) }] : []),
    ]);
  };

  /** What the selected word really was: the next revision, re-timed by the server's alignment. */
  const correct = async () => {
    const word = chosen.length === 1 ? chosen[0]! : null;
    const said = text.trim();
    if (!transcription || !word || !said || said === word.text) return;
    setError(null);
    setFlagged(new Set());
    setBusy('correcting');
    try {
      const path = `/v2/transcriptions/${encodeURIComponent(transcription.id)}`;
      await api<Transcription>('PATCH', path, {
        revision: transcription.revision,
        words: [{ id: word.id, text: said }],
      });
      const done = await settle<Transcription>(path, () => mounted.current);
      if (!done) return;
      if (done.error)
        setError(
          new ApiError(done.error.message ?? 'The correction failed.', 0, done.error.code ?? undefined),
        );
      else setCorrected(new Set([...corrected, word.id]));
      if (done.transcript) setTranscription(done);
    } catch (err) {
      setError(err);
    } finally {
      if (mounted.current) setBusy(null);
    }
  };

  const makePreview = async () => {
    if (!transcription?.sourceVideoUrl) return;
    setError(null);
    setFlagged(new Set());
    setPreview(null);
    setBusy('previewing');
    try {
      const job = await api<DialogueEditJob>('POST', '/v2/dialogue-edits', {
        transcript: transcription.transcript,
        edits: ops,
        sourceVideoUrl: transcription.sourceVideoUrl,
        ...(win.startMs !== null ? { startMs: win.startMs } : {}),
        ...(win.endMs !== null ? { endMs: win.endMs } : {}),
      });
      const done = await settle<DialogueEditJob>(
        `/v2/dialogue-edits/${encodeURIComponent(job.id)}`,
        () => mounted.current,
      );
      if (!done) return;
      if (done.status === 'FAILED') {
        setFlagged(new Set(done.error?.wordIds ?? []));
        setError(
          new ApiError(
            done.error?.message ?? 'The preview failed.',
            0,
            done.error?.code ?? undefined,
            'Change the marked words, or edit less of them at once.',
          ),
        );
      } else setPreview(done);
    } catch (err) {
      const i = err instanceof ApiError ? editOfField(err.field) : null;
      const op = i !== null ? ops[i] : undefined;
      if (op) setFlagged(new Set(op.kind === 'change' ? [op.wordId] : op.wordIds));
      setError(err);
    } finally {
      if (mounted.current) setBusy(null);
    }
  };

  const render = async () => {
    if (!video || !preview) return;
    const body = {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: video.id }],
      dialogueEdit: { id: preview.id },
    };
    const sent = JSON.stringify(body);
    if (attempt.current?.body !== sent) attempt.current = { body: sent, key: uuid() };
    setError(null);
    setBusy('rendering');
    try {
      const g = await api<Generation>('POST', '/v2/generate', body, {
        'Idempotency-Key': attempt.current.key,
      });
      attempt.current = null;
      navigate(`generations/${encodeURIComponent(g.id)}`);
    } catch (err) {
      if (err instanceof ApiError && err.status !== 0) attempt.current = null;
      // A removal too large to hide in the picture: mark the source words of that section.
      const section =
        err instanceof ApiError
          ? (err.body.dialogueEditSection as { sourceStartMs: number; sourceDurationMs: number } | undefined)
          : undefined;
      if (section) {
        const end = section.sourceStartMs + section.sourceDurationMs;
        setFlagged(
          new Set(words.filter((w) => w.endMs > section.sourceStartMs && w.startMs < end).map((w) => w.id)),
        );
      }
      setError(err);
    } finally {
      if (mounted.current) setBusy(null);
    }
  };

  const seek = (ms: number) => {
    if (player.current) player.current.currentTime = ms / 1000;
    setPlayheadMs(ms);
  };
  const setBound = (key: 'startMs' | 'endMs', value: string) => {
    const s = Number(value);
    setWin({ ...win, [key]: value.trim() === '' || !Number.isFinite(s) ? null : Math.round(s * 1000) });
    setPreview(null);
  };
  const summary = chosen.length
    ? `${chosen.length} ${chosen.length === 1 ? 'word' : 'words'} selected: ${chosen.map((w) => w.text).join(' ')}.`
    : 'No words selected.';

  return (
    <section class="dialogue">
      <h1>Dialogue editor</h1>
      <p class="hint">
        Change or remove words of a video without a reshoot: transcribe it, edit the words, listen, render.
      </p>
      <MediaPicker kind="VIDEO" title="Video to edit" value={video} onChange={choose} />
      {video && !transcription?.transcript ? (
        <div class="dialogue-bar">
          <button type="button" disabled={busy !== null} onClick={() => void transcribe()}>
            Transcribe
          </button>
          {busy === 'transcribing' ? (
            <span role="status">
              <progress aria-label="Transcribing" /> Transcribing…
            </span>
          ) : null}
        </div>
      ) : null}
      {transcription?.transcript && video ? (
        <>
          <video
            ref={player}
            class="dialogue-video"
            controls
            src={transcription.sourceVideoUrl ?? video.url}
            aria-label="Source video"
            onTimeUpdate={(e) => setPlayheadMs(e.currentTarget.currentTime * 1000)}
          />
          <Timeline
            words={words}
            durationMs={durationMs}
            ops={ops}
            selection={selection}
            window={win}
            peaks={peaks}
            playheadMs={playheadMs}
            onSeek={seek}
            onSelect={setSelection}
          />
          <fieldset class="dialogue-bar dialogue-mode">
            <legend>Mode</legend>
            <label>
              <input
                type="radio"
                name="dialogue-mode"
                checked={mode === 'correct'}
                disabled={ops.length > 0}
                onChange={() => setMode('correct')}
              />
              Correct the transcript (what was really said, kept as recorded)
            </label>
            <label>
              <input
                type="radio"
                name="dialogue-mode"
                checked={mode === 'edit'}
                onChange={() => setMode('edit')}
              />
              Edit the dialogue (new words are spoken again)
            </label>
          </fieldset>
          <p class="hint">
            {mode === 'correct'
              ? 'Select a word the transcript got wrong and type what was really said; correct before editing.'
              : 'Select a word to retype it; Shift+click or Shift+arrow keys select several to remove or replace.'}
          </p>
          <TranscriptWords
            words={words}
            ops={ops}
            selection={selection}
            onSelect={setSelection}
            flagged={flagged}
            corrected={corrected}
          />
          <p class="hint" role="status" aria-live="polite">
            {summary}
          </p>
          {mode === 'correct' ? (
            <form
              class="dialogue-actions dialogue-bar"
              onSubmit={(e) => {
                e.preventDefault();
                void correct();
              }}
            >
              <label>
                What was really said
                <input
                  value={text}
                  disabled={chosen.length !== 1 || busy !== null}
                  onInput={(e) => setText(e.currentTarget.value)}
                />
              </label>
              <button
                type="submit"
                disabled={
                  chosen.length !== 1 || !text.trim() || text.trim() === chosen[0]?.text || busy !== null
                }
              >
                Save the correction
              </button>
              {busy === 'correcting' ? (
                <span role="status">
                  <progress aria-label="Aligning the correction" /> Aligning the correction…
                </span>
              ) : (
                <span role="status">
                  {corrected.size
                    ? `${corrected.size} ${corrected.size === 1 ? 'word' : 'words'} corrected (revision ${transcription.revision}).`
                    : ''}
                </span>
              )}
            </form>
          ) : null}
          <form
            class="dialogue-actions dialogue-bar"
            hidden={mode === 'correct'}
            onSubmit={(e) => {
              e.preventDefault();
              replace();
            }}
          >
            <label>
              {chosen.length > 1 ? 'Replace the selected words with' : 'New text for the selected word'}
              <input value={text} disabled={!chosen.length} onInput={(e) => setText(e.currentTarget.value)} />
            </label>
            <button type="submit" disabled={!chosen.length || !text.trim()}>
              Change
            </button>
            <button
              type="button"
              disabled={!chosen.length}
              onClick={() => apply([{ kind: 'remove', wordIds: chosen.map((w) => w.id) }])}
            >
              Remove
            </button>
            <button type="button" disabled={!chosen.length} onClick={() => apply([])}>
              Undo edits of the selection
            </button>
          </form>
          <p aria-live="polite">
            {ops.length} {ops.length === 1 ? 'edit' : 'edits'}.
          </p>
          <fieldset class="dialogue-bar dialogue-range">
            <legend>Window (optional: only this stretch is previewed and rendered)</legend>
            <label>
              Start (s)
              <input
                type="number"
                min="0"
                step="0.01"
                onInput={(e) => setBound('startMs', e.currentTarget.value)}
              />
            </label>
            <label>
              End (s)
              <input
                type="number"
                min="0"
                step="0.01"
                onInput={(e) => setBound('endMs', e.currentTarget.value)}
              />
            </label>
          </fieldset>
          <div class="dialogue-bar">
            <button type="button" disabled={!ops.length || busy !== null} onClick={() => void makePreview()}>
              Preview the edit
            </button>
            {busy === 'previewing' ? (
              <span role="status">
                <progress aria-label="Making the preview" /> Making the preview…
              </span>
            ) : null}
          </div>
        </>
      ) : null}
      <ErrorMessage error={error} />
      {preview ? (
        <>
          <DialoguePreview job={preview} />
          <button type="button" disabled={busy !== null} onClick={() => void render()}>
            Render the video
          </button>
          <p class="muted">
            The render opens on its own page, where it plays beside the source (side by side or wipe) and
            takes review notes.
          </p>
        </>
      ) : null}
    </section>
  );
}

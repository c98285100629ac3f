// The segment editor of a finished dub (#/dub/ID): each segment's times, speaker, source text and
// translation, a listen button, per-speaker lanes on a timeline, and a re-dub of only the edited
// segments (POST /v2/generate with dubParams.basedOn), a voice per speaker (dubParams.voices: that
// speaker's segments are spoken again), plus the video and subtitle downloads.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, get, request } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { VoicePicker, type VoiceSettings } from '../components/voice-picker.js';
import { href, navigate } from '../router.js';
import type { DubSegment, DubTranscript, Generation } from '../types.js';
import { uuid } from './new-request.js';

/** What the user changed in one segment: the text, and/or the source span (both ends together). */
interface Edit {
  translatedText?: string;
  startMs?: number;
  endMs?: number;
}

const seconds = (ms: number) => (ms / 1000).toFixed(2);

/** A language code in English words (Spanish for es), or the code where the browser knows none. */
function languageName(code: string): string {
  try {
    return new Intl.DisplayNames(['en'], { type: 'language' }).of(code) ?? code;
  } catch {
    return code;
  }
}

/** The re-dub's segments: only those whose text or span differ from the dub's. */
export function changedSegments(
  segments: readonly DubSegment[],
  edits: Readonly<Record<string, Edit>>,
): { id: string; translatedText?: string; startMs?: number; endMs?: number }[] {
  const out = [];
  for (const s of segments) {
    const e = edits[s.id];
    if (!e) continue;
    const text =
      e.translatedText !== undefined && e.translatedText !== s.translatedText ? e.translatedText : undefined;
    const start = e.startMs ?? s.startMs;
    const end = e.endMs ?? s.endMs;
    const moved = start !== s.startMs || end !== s.endMs;
    if (text === undefined && !moved) continue;
    out.push({
      id: s.id,
      ...(text !== undefined ? { translatedText: text } : {}),
      ...(moved ? { startMs: start, endMs: end } : {}),
    });
  }
  return out;
}

/** The speakers given another voice than the one they have: dubParams.voices of the re-dub. */
export function changedVoices(
  voices: DubTranscript['voices'],
  picked: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of voices) {
    const p = picked[v.speaker];
    if (p && p !== v.voiceId) out[v.speaker] = p;
  }
  return out;
}

export function DubEditor({ id }: { id: string }) {
  const [t, setT] = useState<DubTranscript | null>(null);
  const [g, setG] = useState<Generation | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [edits, setEdits] = useState<Record<string, Edit>>({});
  const [picked, setPicked] = useState<Record<string, string>>({});
  const [focused, setFocused] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [sendError, setSendError] = useState<{ error: unknown; segment?: string } | null>(null);
  // An Idempotency-Key is reused only to retry the same body after an answer that never came.
  const attempt = useRef<{ body: string; key: string } | null>(null);

  useEffect(() => {
    setT(null);
    setEdits({});
    setPicked({});
    setError(null);
    const gid = encodeURIComponent(id);
    Promise.all([
      get<DubTranscript>(`/v2/generations/${gid}/transcript`),
      get<Generation>(`/v2/generate/${gid}`),
    ]).then(([transcript, generation]) => {
      setT(transcript);
      setG(generation);
    }, setError);
  }, [id]);

  const changed = t ? changedSegments(t.segments, edits) : [];
  const revoiced = t ? changedVoices(t.voices, picked) : {};
  const speakers = Object.keys(revoiced);
  const anything = changed.length > 0 || speakers.length > 0;
  const edit = (sid: string, e: Edit) => setEdits((old) => ({ ...old, [sid]: { ...old[sid], ...e } }));

  const regenerate = async () => {
    if (!t || !anything) return;
    const body = {
      model: g?.model ?? 'lipsync-2',
      dubParams: {
        basedOn: t.generationId,
        ...(changed.length ? { segments: changed } : {}),
        ...(speakers.length ? { voices: revoiced } : {}),
      },
    };
    const text = JSON.stringify(body);
    if (attempt.current?.body !== text) attempt.current = { body: text, key: uuid() };
    setBusy(true);
    setSendError(null);
    try {
      const next = await api<Generation>('POST', '/v2/generate', body, {
        'Idempotency-Key': attempt.current.key,
      });
      attempt.current = null;
      navigate(`generations/${encodeURIComponent(next.id)}`);
    } catch (e) {
      if (e instanceof ApiError && e.status !== 0) attempt.current = null;
      // A field such as dubParams.segments[1].translatedText names the segment it is about.
      const at = e instanceof ApiError ? /^dubParams\.segments\[(\d+)\]/.exec(e.field ?? '') : null;
      setSendError({ error: e, segment: at ? changed[Number(at[1])]?.id : undefined });
    } finally {
      setBusy(false);
    }
  };

  const focusRow = (sid: string) => {
    setFocused(sid);
    document.getElementById(`dub-text-${sid}`)?.focus();
  };

  return (
    <section aria-labelledby="dub-editor-title" class="dub-editor">
      <p>
        <a href={href(`generations/${encodeURIComponent(id)}`)}>← The generation</a>
      </p>
      <h1 id="dub-editor-title">Dubbing editor</h1>
      <ErrorMessage error={error} />
      {error instanceof ApiError && error.code === 'generation_not_ready' ? (
        <p>
          <a href={href(`generations/${encodeURIComponent(id)}`)}>Follow the dub until it is done</a>, then
          come back.
        </p>
      ) : null}
      {t ? (
        <>
          <p>
            From <strong>{languageName(t.sourceLang)}</strong> into{' '}
            <strong>{languageName(t.targetLang)}</strong> by {t.provider}
            {t.route?.via ? ` through ${t.route.via} (lower quality)` : ''}
            {t.transcriptSource === 'given' ? '; the words were given' : '; the words were recognized'}.
            {t.basedOn ? (
              <>
                {' '}
                A re-dub of{' '}
                <a href={href(`dub/${encodeURIComponent(t.basedOn.generationId)}`)}>an earlier dub</a>: spoken
                again {t.basedOn.regenerated.join(', ') || 'nothing'}.
              </>
            ) : null}
          </p>
          <Downloads id={t.generationId} />
          <Timeline
            segments={t.segments}
            lengthMs={(g?.outputDuration ?? 0) * 1000}
            focused={focused}
            onPick={focusRow}
          />
          <SpeakerVoices
            t={t}
            edits={edits}
            picked={picked}
            onPick={(sp, v) => setPicked((o) => ({ ...o, [sp]: v }))}
          />
          <SegmentTable
            t={t}
            edits={edits}
            focused={focused}
            onEdit={edit}
            onFocus={setFocused}
            errorAt={sendError?.segment}
            error={sendError?.error}
          />
          <div class="dub-actions">
            <button type="button" disabled={busy || !anything} onClick={regenerate}>
              {busy ? 'Starting the re-dub…' : 'Regenerate changed segments'}
            </button>{' '}
            <button
              type="button"
              class="secondary"
              disabled={busy || !(Object.keys(edits).length || Object.keys(picked).length)}
              onClick={() => {
                setEdits({});
                setPicked({});
              }}
            >
              Undo all changes
            </button>
            {sendError && !sendError.segment ? <ErrorMessage error={sendError.error} /> : null}
          </div>
          <p role="status" aria-live="polite" class="muted">
            {busy
              ? 'Starting a new generation that speaks only the changed segments again.'
              : anything
                ? [
                    changed.length
                      ? `${changed.length} segment${changed.length === 1 ? '' : 's'} changed: ${changed.map((c) => c.id).join(', ')}.`
                      : '',
                    speakers.length ? `Another voice for ${speakers.join(', ')}.` : '',
                  ]
                    .filter(Boolean)
                    .join(' ')
                : 'No changes yet. Edit a translation or a time, or pick a voice, then regenerate.'}
          </p>
        </>
      ) : !error ? (
        <p>Loading the transcript…</p>
      ) : null}
    </section>
  );
}

/**
 * A voice picker per speaker (the target language's voices), its sample reading the speaker's first
 * translated segment. A new voice re-speaks all that speaker's segments.
 */
function SpeakerVoices({
  t,
  edits,
  picked,
  onPick,
}: {
  t: DubTranscript;
  edits: Record<string, Edit>;
  picked: Record<string, string>;
  onPick: (speaker: string, voiceId: string) => void;
}) {
  return (
    <div class="dub-voices">
      {t.voices.map((v) => {
        const first = t.segments.find((s) => s.speaker === v.speaker);
        const text = (first && (edits[first.id]?.translatedText ?? first.translatedText)) || '…';
        const value: VoiceSettings = { voiceId: picked[v.speaker] ?? v.voiceId, speed: 1, stability: null };
        return (
          <div key={v.speaker}>
            <VoicePicker
              value={value}
              onChange={(n: VoiceSettings) => onPick(v.speaker, n.voiceId)}
              script={text.slice(0, 200)}
              errors={{}}
              language={t.targetLang}
              legend={`Voice of ${v.speaker}`}
              label={`Voice of ${v.speaker}`}
            />
            <p class="muted">
              Now: {v.name}
              {v.matched ? ', matched to the speaker' : ''}.
              {value.voiceId !== v.voiceId ? ' Regenerate to speak all their segments in the new voice.' : ''}
            </p>
          </div>
        );
      })}
    </div>
  );
}

function Downloads({ id }: { id: string }) {
  const [video, setVideo] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const gid = encodeURIComponent(id);
  useEffect(() => {
    request('GET', `/v2/generations/${gid}/download`)
      .then((res) => res.text())
      .then((url) => setVideo(url.trim()), setError);
  }, [id]);
  const sub = (format: 'srt' | 'vtt', lang: 'source' | 'target') => (
    <a href={`/v2/generations/${gid}/subtitles?format=${format}&lang=${lang}`} download>
      {lang === 'target' ? 'Dubbed language' : 'Original language'} ({format.toUpperCase()})
    </a>
  );
  return (
    <nav aria-label="Downloads" class="dub-downloads">
      {video ? (
        <a href={video} download class="button">
          Download the dubbed video
        </a>
      ) : null}
      <a href={href(`generations/${gid}`)}>Compare the dub with its source</a>
      <span>Subtitles:</span> {sub('srt', 'target')} {sub('vtt', 'target')} {sub('srt', 'source')}{' '}
      {sub('vtt', 'source')}
      <ErrorMessage error={error} />
    </nav>
  );
}

/** One lane per speaker; each segment a block placed by where its dubbed speech is heard. */
function Timeline({
  segments,
  lengthMs,
  focused,
  onPick,
}: {
  segments: readonly DubSegment[];
  /** The output's length: the lanes span the whole video. */
  lengthMs: number;
  focused: string | null;
  onPick: (id: string) => void;
}) {
  const end = Math.max(1, lengthMs, ...segments.map((s) => Math.max(s.endMs, s.dubEndMs)));
  const speakers = [...new Set(segments.map((s) => s.speaker))];
  return (
    <div class="dub-timeline" role="group" aria-label="Timeline by speaker">
      {speakers.map((sp) => (
        <div key={sp} class="dub-lane">
          <span class="dub-lane-name">{sp}</span>
          <div class="dub-lane-track">
            {segments
              .filter((s) => s.speaker === sp)
              .map((s) => (
                <button
                  key={s.id}
                  type="button"
                  class={`dub-block${focused === s.id ? ' focused' : ''}${s.fits ? '' : ' overrun'}`}
                  style={{
                    left: `${(s.dubStartMs / end) * 100}%`,
                    width: `${Math.max(0.5, ((s.dubEndMs - s.dubStartMs) / end) * 100)}%`,
                  }}
                  aria-label={`Segment ${s.id}, ${sp}, ${seconds(s.dubStartMs)} to ${seconds(s.dubEndMs)} seconds`}
                  title={s.translatedText}
                  onClick={() => onPick(s.id)}
                >
                  {s.id}
                </button>
              ))}
          </div>
        </div>
      ))}
      <p class="muted dub-scale" aria-hidden="true">
        0 s – {seconds(end)} s
      </p>
    </div>
  );
}

function SegmentTable({
  t,
  edits,
  focused,
  onEdit,
  onFocus,
  errorAt,
  error,
}: {
  t: DubTranscript;
  edits: Record<string, Edit>;
  focused: string | null;
  onEdit: (id: string, e: Edit) => void;
  onFocus: (id: string) => void;
  errorAt?: string;
  error?: unknown;
}) {
  return (
    <table class="dub-segments">
      <caption class="sr-only">Segments of the dub</caption>
      <thead>
        <tr>
          <th scope="col">Segment</th>
          <th scope="col">Source span (s)</th>
          <th scope="col">Speaker</th>
          <th scope="col">Source text</th>
          <th scope="col">Translation</th>
          <th scope="col">Dubbed speech</th>
        </tr>
      </thead>
      <tbody>
        {t.segments.map((s) => {
          const e = edits[s.id] ?? {};
          const text = e.translatedText ?? s.translatedText;
          return (
            <tr key={s.id} id={`dub-row-${s.id}`} class={focused === s.id ? 'focused' : undefined}>
              <th scope="row">{s.id}</th>
              <td class="dub-times">
                <label>
                  <span class="sr-only">Start of {s.id} in seconds</span>
                  <input
                    type="number"
                    step={0.01}
                    min={0}
                    value={seconds(e.startMs ?? s.startMs)}
                    onFocus={() => onFocus(s.id)}
                    onChange={(ev) =>
                      onEdit(s.id, { startMs: Math.round(Number(ev.currentTarget.value) * 1000) })
                    }
                  />
                </label>
                –
                <label>
                  <span class="sr-only">End of {s.id} in seconds</span>
                  <input
                    type="number"
                    step={0.01}
                    min={0}
                    value={seconds(e.endMs ?? s.endMs)}
                    onFocus={() => onFocus(s.id)}
                    onChange={(ev) =>
                      onEdit(s.id, { endMs: Math.round(Number(ev.currentTarget.value) * 1000) })
                    }
                  />
                </label>
              </td>
              <td>{s.speaker}</td>
              <td lang={t.sourceLang === 'auto' ? undefined : t.sourceLang}>{s.sourceText}</td>
              <td>
                <label for={`dub-text-${s.id}`} class="sr-only">
                  Translation of {s.id}
                </label>
                <textarea
                  id={`dub-text-${s.id}`}
                  lang={t.targetLang}
                  rows={2}
                  value={text}
                  aria-invalid={errorAt === s.id ? true : undefined}
                  onFocus={() => onFocus(s.id)}
                  onInput={(ev) => onEdit(s.id, { translatedText: ev.currentTarget.value })}
                />
                {text !== s.translatedText ? <span class="muted">Changed</span> : null}
                {errorAt === s.id ? <ErrorMessage error={error} /> : null}
              </td>
              <td>
                <SegmentAudio id={t.generationId} segment={s} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** The segment's fitted speech, fetched (a signed URL) when asked for. */
function SegmentAudio({ id, segment }: { id: string; segment: DubSegment }) {
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const listen = () => {
    setError(null);
    request(
      'GET',
      `/v2/generations/${encodeURIComponent(id)}/dub/segments/${encodeURIComponent(segment.id)}/audio`,
    )
      .then((res) => res.text())
      .then((u) => setUrl(u.trim()), setError);
  };
  return (
    <>
      <span class="muted">
        {seconds(segment.dubStartMs)}–{seconds(segment.dubEndMs)} s{segment.fits ? '' : ', runs over'}
      </span>{' '}
      {url ? (
        <audio src={url} controls autoPlay aria-label={`Dubbed speech of ${segment.id}`} />
      ) : (
        <button type="button" class="secondary" onClick={listen} aria-label={`Listen to ${segment.id}`}>
          Listen
        </button>
      )}
      <ErrorMessage error={error} />
    </>
  );
}

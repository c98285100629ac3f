// "Dub a video" (#/dub): a video, the language to dub it into and optionally one voice, sent as
// POST /v2/generate with dubParams; #/dub/ID opens the segment editor of a finished dub instead.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, get } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { voiceFits } from '../components/voice-picker.js';
import { MediaPicker } from '../components/media-picker.js';
import { navigate } from '../router.js';
import type { Asset, DubbingLanguages, DubbingProvider, Generation, Voice } from '../types.js';
import { DubEditor } from './dub-editor.js';
import { uuid } from './new-request.js';

export function DubPage({ id }: { id?: string }) {
  return id ? <DubEditor id={id} /> : <NewDub />;
}

/** A target the chosen source reaches, with how (a pivot is two translations: lower quality). */
interface TargetChoice {
  code: string;
  name: string;
  via?: string;
}

/** The local recognizer hears English only, so "detect" means English for the local provider. */
export function targetsOf(p: DubbingProvider | undefined, source: string): TargetChoice[] {
  if (!p) return [];
  const from = source === 'auto' && p.provider === 'local' ? 'en' : source;
  const name = (code: string) => p.targets.find((t) => t.code === code)?.name ?? code;
  if (p.pairs)
    return p.pairs
      .filter((r) => r.from === from)
      .map((r) => ({
        code: r.to,
        name: name(r.to),
        ...(r.quality === 'pivot' ? { via: r.via ?? '?' } : {}),
      }));
  return p.targets.filter((t) => t.code !== from);
}

// A short sentence in the target language for the listen button (English where none is written).
const SAMPLES: Record<string, string> = {
  es: 'Hola, así suena mi voz.',
  ca: 'Hola, així sona la meva veu.',
  gl: 'Ola, así soa a miña voz.',
  fr: 'Bonjour, voici ma voix.',
  it: 'Ciao, questa è la mia voce.',
  pt: 'Olá, esta é a minha voz.',
  de: 'Hallo, so klingt meine Stimme.',
};
const sampleFor = (lang: string) => SAMPLES[lang.split('-')[0]!] ?? 'Hello, this is how I sound.';

function NewDub() {
  const [video, setVideo] = useState<Asset | null>(null);
  const [langs, setLangs] = useState<DubbingLanguages | null>(null);
  const [voices, setVoices] = useState<Voice[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [provider, setProvider] = useState('local');
  const [source, setSource] = useState('auto');
  const [target, setTarget] = useState('');
  const [voiceId, setVoiceId] = useState('');
  const [transcript, setTranscript] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // An Idempotency-Key is reused only to retry the same body after an answer that never came.
  const attempt = useRef<{ body: string; key: string } | null>(null);

  useEffect(() => {
    get<DubbingLanguages>('/v2/dubbing/languages').then((l) => {
      setLangs(l);
      const first = l.providers.find((p) => p.available);
      if (first) setProvider(first.provider);
    }, setLoadError);
    get<Voice[]>('/v2/voices').then(setVoices, setLoadError);
  }, []);

  const p = langs?.providers.find((x) => x.provider === provider);
  const targets = targetsOf(p, source);
  useEffect(() => {
    if (!targets.some((t) => t.code === target)) setTarget(targets[0]?.code ?? '');
  }, [provider, source, langs]);
  const fitting = (voices ?? []).filter((v) => !target || voiceFits(v, target));
  const voice = fitting.find((v) => v.id === voiceId);
  useEffect(() => {
    if (voiceId && !voice) setVoiceId('');
  }, [target, voices]);

  const start = async (e: Event) => {
    e.preventDefault();
    setError(null);
    if (!video)
      return setError(
        new ApiError('Choose the video to dub first.', 0, undefined, 'Upload one or pick an earlier one.'),
      );
    if (!target) return setError(new ApiError('Choose the language to dub into.', 0));
    const body = {
      model: 'lipsync-2',
      input: [{ type: 'video', assetId: video.id }],
      dubParams: {
        targetLang: target,
        sourceLang: source,
        provider,
        ...(voice ? { voiceId: voice.id } : {}),
        ...(transcript.trim() ? { transcript: transcript.trim() } : {}),
      },
    };
    const text = JSON.stringify(body);
    if (attempt.current?.body !== text) attempt.current = { body: text, key: uuid() };
    setBusy(true);
    try {
      const g = await api<Generation>('POST', '/v2/generate', body, {
        'Idempotency-Key': attempt.current.key,
      });
      attempt.current = null;
      navigate(`generations/${encodeURIComponent(g.id)}`);
    } catch (err) {
      // A refusal with an answer is final for this body: a retry gets a new key.
      if (err instanceof ApiError && err.status !== 0) attempt.current = null;
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="dub-title" class="dub">
      <h1 id="dub-title">Dub a video</h1>
      <p class="muted">
        The video’s speech is recognized, translated and spoken again in another language, and the lips follow
        the new speech. When it is done, review and correct the translation segment by segment.
      </p>
      <ErrorMessage error={loadError} />
      <form onSubmit={start} noValidate>
        <MediaPicker kind="VIDEO" title="Video to dub" value={video} onChange={setVideo} />
        <fieldset>
          <legend>Languages</legend>
          <label>
            Translation provider
            <select value={provider} disabled={!langs} onChange={(e) => setProvider(e.currentTarget.value)}>
              {(langs?.providers ?? []).map((x) => (
                <option key={x.provider} value={x.provider} disabled={!x.available}>
                  {x.provider}
                  {x.available ? '' : ' (not set up on this server)'}
                </option>
              ))}
            </select>
          </label>
          {p ? <p class="muted">{p.note}</p> : null}
          <label>
            Spoken in
            <select value={source} disabled={!p} onChange={(e) => setSource(e.currentTarget.value)}>
              <option value="auto">Detect{provider === 'local' ? ' (English offline)' : ''}</option>
              {(p?.sources ?? []).map((l) => (
                <option key={l.code} value={l.code}>
                  {l.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Dub into
            <select
              value={target}
              disabled={!targets.length}
              onChange={(e) => setTarget(e.currentTarget.value)}
            >
              {targets.map((t) => (
                <option key={t.code} value={t.code}>
                  {t.name}
                  {t.via ? ` (through ${t.via}: lower quality)` : ''}
                </option>
              ))}
            </select>
          </label>
          {p && !targets.length ? <p>This provider cannot translate from that language.</p> : null}
        </fieldset>
        <fieldset>
          <legend>Voice</legend>
          <label>
            Voice that speaks the dub
            <select
              value={voiceId}
              disabled={voices === null}
              onChange={(e) => setVoiceId(e.currentTarget.value)}
            >
              <option value="">A voice near each speaker’s own (recommended)</option>
              {fitting.map((v) => (
                <option key={`${v.provider}:${v.id}`} value={v.id} disabled={!!v.restriction}>
                  {v.name}
                  {v.labels?.gender ? ` (${v.labels.gender})` : ''}
                  {v.type === 'cloned' ? ', cloned' : ''}
                  {v.restriction ? ` — ${v.restriction.message}` : ''}
                </option>
              ))}
            </select>
          </label>
          <p class="muted">One chosen voice speaks for every speaker.</p>
          {voice ? <Listen voice={voice} lang={target} /> : null}
        </fieldset>
        <label class="block">
          The words spoken, if you know them (optional)
          <textarea
            rows={3}
            value={transcript}
            aria-describedby="dub-transcript-hint"
            onInput={(e) => setTranscript(e.currentTarget.value)}
          />
        </label>
        <p id="dub-transcript-hint" class="muted">
          Given words are only timed, not recognized: the translation starts from the right text.
        </p>
        <ErrorMessage error={error} />
        <p>
          <button type="submit" disabled={busy}>
            {busy ? 'Starting…' : 'Dub the video'}
          </button>
        </p>
        <p role="status" class="sr-only">
          {busy ? 'Starting the dub.' : ''}
        </p>
      </form>
    </section>
  );
}

/** A short sample of the chosen voice in the target language (POST /v2/tts). */
function Listen({ voice, lang }: { voice: Voice; lang: string }) {
  const [sample, setSample] = useState<{ url: string; key: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const listen = async () => {
    setBusy(true);
    setError(null);
    try {
      const speech = await api<{ url: string }>('POST', '/v2/tts', {
        script: sampleFor(lang),
        voiceId: voice.id,
        provider: voice.provider,
      });
      setSample({ url: speech.url, key: `${Date.now()}` });
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class="secondary" disabled={busy} onClick={listen}>
        {busy ? 'Making a sample…' : `Listen to ${voice.name}`}
      </button>
      <ErrorMessage error={error} />
      {sample ? (
        <audio key={sample.key} src={sample.url} controls autoPlay aria-label={`Sample of ${voice.name}`} />
      ) : null}
    </>
  );
}

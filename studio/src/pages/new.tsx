import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { FacePicker, type FaceChoice } from '../components/face-picker.js';
import { MediaPicker } from '../components/media-picker.js';
import { VoicePicker, type VoiceSettings } from '../components/voice-picker.js';
import { navigate, type Route } from '../router.js';
import type { Asset, Generation } from '../types.js';
import { CostEstimate } from './new-estimate.js';
import { PreviewSecond } from './new-preview.js';
import { ProjectChoice, SegmentsEditor, SyncModeChoice, type Segment, type SyncMode } from './new-options.js';
import {
  buildRequest,
  quoteFor,
  slotOf,
  uuid,
  WORKFLOWS,
  type FormState,
  type Slot,
  type Workflow,
} from './new-request.js';

const VIDEO_MODELS = [
  ['lipsync-2', 'Standard'],
  ['lipsync-2-pro', 'More detail (slower, costs more)'],
  ['sync-3', 'Sync 3'],
] as const;

/** The studio's main page: pick what to make, give the inputs and options, see the cost, generate. */
export function NewGeneration({ route }: { route: Route }) {
  const workflow = WORKFLOWS.some((w) => w.id === route.id) ? (route.id as Workflow) : null;
  const [visual, setVisual] = useState<Asset | null>(null);
  const [audio, setAudio] = useState<Asset | null>(null);
  const [photoSpeech, setPhotoSpeech] = useState<'recording' | 'script'>('recording');
  const [script, setScript] = useState('');
  const [voice, setVoice] = useState<VoiceSettings>({ voiceId: '', speed: 1, stability: null });
  const [model, setModel] = useState<string>('lipsync-2');
  const [syncMode, setSyncMode] = useState<SyncMode>('cut_off');
  const [segments, setSegments] = useState<Segment[] | null>(null);
  const [face, setFace] = useState<FaceChoice | null>(null);
  const [projectId, setProjectId] = useState('');
  // Where the video player was paused: the moment a preview starts at.
  const [moment, setMoment] = useState<number | null>(null);
  // The video's frame rate, from a quote priced from its media: numbers the frame of a chosen face.
  const [rate, setRate] = useState<{ assetId: string; fps: number } | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const inFlight = useRef(false);
  // An Idempotency-Key is reused only to retry the same body after an answer that never came.
  const lastTry = useRef<{ body: string; key: string } | null>(null);

  const photo = workflow === 'photo';
  const text = workflow === 'script' || (photo && photoSpeech === 'script');
  const chosenModel = photo ? 'sync-3' : model;

  const pick = (w: Workflow) => {
    setError(null);
    navigate(`new/${w}`);
  };
  // Also on Back and Forward: a photo is no video, and the face and parts belong to one video.
  useEffect(() => {
    setVisual((v) => (v && (v.type === 'IMAGE') === photo ? v : null));
    setFace(null);
    setSegments(null);
  }, [workflow]);
  // A file dropped beside a drop zone would make the browser leave the page to show it.
  useEffect(() => {
    const keep = (e: DragEvent) => {
      if (!(e.target instanceof Element && e.target.closest('.drop-zone'))) e.preventDefault();
    };
    addEventListener('dragover', keep);
    addEventListener('drop', keep);
    return () => {
      removeEventListener('dragover', keep);
      removeEventListener('drop', keep);
    };
  }, []);

  // Measured while the video played, where no quote gave the rate (a script is priced by length).
  const [measured, setMeasured] = useState<{ assetId: string; fps: number } | null>(null);
  const fps =
    rate && rate.assetId === visual?.id
      ? rate.fps
      : measured && measured.assetId === visual?.id
        ? measured.fps
        : null;
  const frameOf = (seconds: number): number | null =>
    fps !== null ? Math.round(seconds * fps) : seconds === 0 ? 0 : null;

  const form: FormState = {
    workflow,
    visual,
    audio,
    text,
    script,
    voice,
    model: chosenModel,
    syncMode,
    segments,
    face,
    projectId,
  };
  const request = buildRequest(form, frameOf);
  const quote = quoteFor(form, frameOf);

  const generate = async (e: Event) => {
    e.preventDefault();
    // A second click before the first answer is ignored (the button's disabled state lags a render).
    if (!request || inFlight.current) return;
    inFlight.current = true;
    setBusy(true);
    setError(null);
    const json = JSON.stringify(request);
    const key = lastTry.current?.body === json ? lastTry.current.key : uuid();
    lastTry.current = { body: json, key };
    try {
      const g = await api<Generation>('POST', '/v2/generate', request, { 'Idempotency-Key': key });
      lastTry.current = null;
      navigate(`generations/${g.id}`);
    } catch (err) {
      const e2 = err instanceof ApiError ? err : new ApiError('Something went wrong.', 0);
      // A refusal is final for this body: a new click is a new request.
      if (e2.status > 0 && e2.status < 500) lastTry.current = null;
      setError(e2);
    } finally {
      inFlight.current = false;
      setBusy(false);
    }
  };

  const at = (slot: Slot) => (error && slotOf(error.field, text) === slot ? error : null);
  const unplaced = error && slotOf(error.field, text) === null ? error : null;

  return (
    <section aria-labelledby="new-title" class="new-generation">
      <h1 id="new-title">New video</h1>
      <fieldset class="workflows">
        <legend>What do you want to make?</legend>
        <div class="workflow-cards">
          {WORKFLOWS.map((w) => (
            <label key={w.id} class={`workflow-card${workflow === w.id ? ' selected' : ''}`}>
              <input type="radio" name="workflow" checked={workflow === w.id} onChange={() => pick(w.id)} />
              <strong>{w.title}</strong>
              <span class="muted">{w.line}</span>
            </label>
          ))}
        </div>
      </fieldset>

      {workflow ? (
        <form
          onSubmit={generate}
          class="new-form"
          aria-label={WORKFLOWS.find((w) => w.id === workflow)!.title}
        >
          <div class="new-main">
            <div class="inputs">
              <MediaPicker
                kind={photo ? 'IMAGE' : 'VIDEO'}
                title={photo ? 'Photo' : 'Video'}
                hint={
                  photo
                    ? 'A clear portrait, the face looking at the camera.'
                    : 'A video where the face is visible; its own sound is replaced.'
                }
                value={visual}
                onChange={(a) => (setVisual(a), setFace(null), setError(null))}
                projectId={projectId || undefined}
                error={at('visual')}
              />
              {photo ? (
                <fieldset class="choices">
                  <legend>What the photo says</legend>
                  <label class="choice">
                    <input
                      type="radio"
                      name="photo-speech"
                      checked={photoSpeech === 'recording'}
                      onChange={() => setPhotoSpeech('recording')}
                    />
                    <span>A recording</span>
                  </label>
                  <label class="choice">
                    <input
                      type="radio"
                      name="photo-speech"
                      checked={photoSpeech === 'script'}
                      onChange={() => setPhotoSpeech('script')}
                    />
                    <span>A script read by a voice</span>
                  </label>
                </fieldset>
              ) : null}
              {text ? (
                <div class="script">
                  <label>
                    Script
                    <textarea
                      rows={5}
                      maxLength={5000}
                      value={script}
                      aria-invalid={at('script') ? true : undefined}
                      aria-describedby="script-count"
                      onInput={(e) => setScript(e.currentTarget.value)}
                    />
                  </label>
                  <p id="script-count" class="muted">
                    {[...script].length} of 5,000 characters.
                  </p>
                  <ErrorMessage error={at('script')} />
                  <VoicePicker
                    value={voice}
                    onChange={setVoice}
                    script={script}
                    errors={{ voice: at('voice'), settings: at('voiceSettings') }}
                  />
                </div>
              ) : (
                <MediaPicker
                  kind="AUDIO"
                  title="Recording"
                  hint="The speech the lips will follow."
                  value={audio}
                  onChange={(a) => (setAudio(a), setError(null))}
                  projectId={projectId || undefined}
                  error={at('audio')}
                />
              )}
            </div>

            {!photo && visual?.url ? (
              <section aria-labelledby="face-title">
                <h2 id="face-title">Face to animate</h2>
                <FacePicker
                  src={visual.url}
                  value={face}
                  onChange={setFace}
                  frameOf={frameOf}
                  onFps={(f) => setMeasured({ assetId: visual.id, fps: f })}
                  onMoment={setMoment}
                />
                <ErrorMessage error={at('face')} />
              </section>
            ) : null}
          </div>

          <div class="new-side">
            <section aria-labelledby="options-title">
              <h2 id="options-title">Options</h2>
              {photo ? (
                <p class="muted">
                  Photos are animated with the Sync 3 model; the result lasts as long as the speech.
                </p>
              ) : (
                <>
                  <label>
                    Model
                    <select
                      value={model}
                      onChange={(e) => setModel(e.currentTarget.value)}
                      aria-invalid={at('model') ? true : undefined}
                    >
                      {VIDEO_MODELS.map(([id, name]) => (
                        <option key={id} value={id}>
                          {name} ({id})
                        </option>
                      ))}
                    </select>
                  </label>
                  <ErrorMessage error={at('model')} />
                  <SyncModeChoice value={syncMode} onChange={setSyncMode} error={at('syncMode')} />
                  <SegmentsEditor value={segments} onChange={setSegments} error={at('segments')} />
                </>
              )}
              <ProjectChoice value={projectId} onChange={setProjectId} error={at('project')} />
            </section>

            <CostEstimate quote={quote} onEstimate={(e) => setRate({ assetId: visual!.id, fps: e.fps })} />

            <PreviewSecond request={request} moment={moment} />

            <ErrorMessage error={unplaced} />
            {error && !unplaced ? (
              <p class="error-summary">
                The server refused the request: see the message beside the field concerned.
              </p>
            ) : null}
            <p>
              <button type="submit" disabled={busy || !request}>
                {busy ? 'Starting…' : 'Generate'}
              </button>{' '}
              {!request ? (
                <span class="muted">
                  {text
                    ? 'Give the ' + (photo ? 'photo' : 'video') + ', a script and a voice first.'
                    : 'Give both inputs first.'}
                </span>
              ) : null}
            </p>
          </div>
        </form>
      ) : (
        <p class="muted">Choose one of the three above to start.</p>
      )}
    </section>
  );
}

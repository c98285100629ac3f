import { useState } from 'preact/hooks';
import { api, upload } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { navigate, type Route } from '../router.js';
import type { Asset, Generation } from '../types.js';

/** Lip-sync a video to a recording: upload both, then start the generation. */
export function NewGeneration(_props: { route: Route }) {
  const [video, setVideo] = useState<File | null>(null);
  const [audio, setAudio] = useState<File | null>(null);
  const [progress, setProgress] = useState<string>('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const send = async (file: File, label: string) => {
    const form = new FormData();
    form.append('file', file, file.name);
    return upload<Asset>('/v2/assets/upload', form, (f) =>
      setProgress(`Uploading ${label}: ${Math.round(f * 100)} %`),
    );
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!video || !audio) return;
    setBusy(true);
    setError(null);
    try {
      const v = await send(video, 'the video');
      const a = await send(audio, 'the recording');
      setProgress('Starting…');
      const g = await api<Generation>('POST', '/v2/generate', {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: v.id },
          { type: 'audio', assetId: a.id },
        ],
      });
      navigate(`generations/${g.id}`);
    } catch (err) {
      setError(err);
      setProgress('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="new-title">
      <h1 id="new-title">Lip-sync a video to a recording</h1>
      <form onSubmit={submit}>
        <label>
          Video
          <input
            type="file"
            accept="video/*"
            required
            onChange={(e) => setVideo(e.currentTarget.files?.[0] ?? null)}
          />
        </label>
        <label>
          Recording
          <input
            type="file"
            accept="audio/*"
            required
            onChange={(e) => setAudio(e.currentTarget.files?.[0] ?? null)}
          />
        </label>
        <button type="submit" disabled={busy || !video || !audio}>
          Generate
        </button>
      </form>
      <p role="status">{progress}</p>
      <ErrorMessage error={error} />
    </section>
  );
}

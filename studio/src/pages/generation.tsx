import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, get, request } from '../api.js';
import { Compare } from '../components/compare.js';
import { ErrorMessage } from '../components/error-message.js';
import { Notes } from '../components/notes.js';
import { href, navigate } from '../router.js';
import { ENDED, type Asset, type CatalogueEntry, type Generation } from '../types.js';
import { QualityReport } from './generation-quality.js';
import { duration, StatusBadge, statusWords } from './generation-status.js';

const path = (id: string, query = '') => `/v2/generate/${encodeURIComponent(id)}${query}`;

/** The public error catalogue, read once per page load (it changes only with the server's version). */
let catalogue: Promise<CatalogueEntry[]> | null = null;
function catalogueEntry(code: string): Promise<CatalogueEntry | undefined> {
  catalogue ??= get<CatalogueEntry[]>('/v2/errors').catch((e) => {
    catalogue = null;
    throw e;
  });
  return catalogue.then((list) => list.find((e) => e.code === code));
}

/**
 * Where the source video can be played: its url, or its uploaded asset's signed url. A re-dub of a dub
 * made from a URL names neither: its source is the earlier dub's (the transcript says which).
 */
async function sourceUrlOf(g: Generation, depth = 0): Promise<string | null> {
  const video = g.input.find((i) => i.type === 'video') ?? g.input[0];
  if (video?.url) return video.url;
  if (video?.assetId) {
    const a = await get<Asset>(`/v2/assets/${encodeURIComponent(video.assetId)}`);
    return a.url ?? null;
  }
  if (depth > 20) return null;
  const t = await get<{ basedOn?: { generationId: string } | null }>(
    `/v2/generations/${encodeURIComponent(g.id)}/transcript`,
  ).catch(() => null);
  const earlier = t?.basedOn?.generationId;
  return earlier ? sourceUrlOf(await get<Generation>(path(earlier)), depth + 1) : null;
}

/** What the result is, for the compare view's captions. */
function resultName(g: Generation): string {
  if (g.input.some((i) => i.type === 'dialogueEdit')) return 'Edit';
  return (g.quality as Record<string, unknown> | null | undefined)?.dub ? 'Dub' : 'Result';
}

/** One generation: its live progress, cancel and delete, why it failed, or its result and report. */
export function GenerationPage({ id }: { id: string }) {
  const [g, setG] = useState<Generation | null>(null);
  const [percent, setPercent] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const ended = g !== null && ENDED.has(g.status);

  // Long-poll until it ends; a generation that has ended stays as the first terminal answer said.
  useEffect(() => {
    let stopped = false;
    const keep = (next: Generation) => {
      if (!stopped) setG((old) => (old && ENDED.has(old.status) && !ENDED.has(next.status) ? old : next));
    };
    (async () => {
      let current = await get<Generation>(path(id, '?include=progress'));
      keep(current);
      if (typeof current.progress_percent === 'number') setPercent(current.progress_percent);
      while (!stopped && !ENDED.has(current.status)) {
        current = await get<Generation>(path(id, '?wait=true&timeout=10'));
        keep(current);
      }
      // Once ended: the engine's report (kept for completed ones and faceless failures).
      if (!stopped) keep(await get<Generation>(path(id, '?include=quality')));
    })().catch((e) => !stopped && setError(e));
    return () => {
      stopped = true;
    };
  }, [id]);

  // The percent, read beside the long-poll (the API does not combine wait with include=progress).
  useEffect(() => {
    if (!g || ended) return;
    const timer = setInterval(() => {
      get<Generation>(path(id, '?include=progress')).then(
        (p) => {
          if (typeof p.progress_percent === 'number') setPercent(p.progress_percent);
        },
        () => undefined, // the next read tries again
      );
    }, 1500);
    return () => clearInterval(timer);
  }, [id, g !== null, ended]);

  return (
    <section aria-labelledby="generation-title">
      <p>
        <a href={href('history')}>← History</a>
      </p>
      <h1 id="generation-title">{g?.preview ? 'Preview of one second' : 'Generation'}</h1>
      <ErrorMessage error={error} />
      {g ? (
        <>
          <p role="status" aria-label="Generation status" class="status-line">
            Status: <StatusBadge status={g.status} />
          </p>
          <Facts g={g} />
          {!ended ? <Running g={g} percent={percent} onChanged={setG} /> : null}
          {ended && g.status !== 'COMPLETED' ? <Failure g={g} /> : null}
          {g.status === 'COMPLETED' ? <Result g={g} /> : null}
          {ended ? <Delete g={g} /> : null}
        </>
      ) : !error ? (
        <p>Loading…</p>
      ) : null}
    </section>
  );
}

function Facts({ g }: { g: Generation }) {
  return (
    <dl class="facts">
      <div>
        <dt>Id</dt>
        <dd>
          <code>{g.id}</code>
        </dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd>{new Date(g.createdAt).toLocaleString()}</dd>
      </div>
      <div>
        <dt>Model</dt>
        <dd>{g.model}</dd>
      </div>
      {g.outputFileName ? (
        <div>
          <dt>File name</dt>
          <dd>{g.outputFileName}</dd>
        </div>
      ) : null}
      {g.projectId ? (
        <div>
          <dt>Project</dt>
          <dd>
            <a href={href(`history?project=${encodeURIComponent(g.projectId)}`)}>Its generations</a>
          </dd>
        </div>
      ) : null}
      {g.outputDuration !== null ? (
        <div>
          <dt>Duration</dt>
          <dd>{duration(g.outputDuration)}</dd>
        </div>
      ) : null}
    </dl>
  );
}

function Running({
  g,
  percent,
  onChanged,
}: {
  g: Generation;
  percent: number | null;
  onChanged: (g: Generation) => void;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const cancel = async () => {
    setBusy(true);
    setError(null);
    try {
      onChanged(await api<Generation>('POST', `/v2/generations/${encodeURIComponent(g.id)}/cancel`, {}));
      setAsking(false);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const words =
    g.status === 'PENDING'
      ? 'Waiting for a worker to start it.'
      : percent === null
        ? 'Processing.'
        : `Processing: ${Math.round(percent)} % done.`;
  return (
    <div class="card running">
      <label class="progress-label">
        <span>{words}</span>
        <progress
          max={100}
          value={percent ?? undefined}
          aria-valuetext={percent === null ? statusWords(g.status) : `${Math.round(percent)} %`}
        />
      </label>
      {asking ? (
        <div role="group" aria-labelledby="cancel-question" class="confirm">
          <p id="cancel-question">Cancel this generation? Its work so far is lost.</p>
          <button type="button" class="danger" disabled={busy} onClick={cancel}>
            Yes, cancel it
          </button>{' '}
          <button type="button" class="secondary" disabled={busy} onClick={() => setAsking(false)}>
            Keep it running
          </button>
        </div>
      ) : (
        <button type="button" class="secondary" onClick={() => setAsking(true)}>
          Cancel generation
        </button>
      )}
      <ErrorMessage error={error} />
    </div>
  );
}

/** Why it did not complete, in the catalogue's words (message and what to do). */
function Failure({ g }: { g: Generation }) {
  const code = g.errorCode ?? (g as { error_code?: string }).error_code;
  const [entry, setEntry] = useState<CatalogueEntry | null | undefined>(undefined);
  useEffect(() => {
    if (!code) return setEntry(null);
    catalogueEntry(code).then(
      (e) => setEntry(e ?? null),
      () => setEntry(null),
    );
  }, [code]);
  if (entry === undefined) return null;
  const message =
    entry?.message ?? g.error ?? `This generation ended as ${statusWords(g.status).toLowerCase()}.`;
  const detail = g.error && g.error !== message ? g.error : null;
  return (
    <div class="failure">
      <ErrorMessage error={new ApiError(message, 0, code, entry?.suggestion)} />
      {detail ? <p class="muted">Details: {detail}</p> : null}
    </div>
  );
}

function Result({ g }: { g: Generation }) {
  const [source, setSource] = useState<string | null | undefined>(undefined);
  const [download, setDownload] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    sourceUrlOf(g).then(setSource, () => setSource(null));
    request('GET', `/v2/generations/${encodeURIComponent(g.id)}/download`)
      .then((res) => res.text())
      .then((url) => setDownload(url.trim()), setError);
  }, [g.id]);
  const q = g.quality as Record<string, unknown> | null | undefined;
  const fpsKnown = typeof q?.fps === 'number' && q.fps > 0;
  const fps = fpsKnown ? (q!.fps as number) : 25;
  const fileName = fileNameOf(g, download);
  return (
    <>
      {g.outputUrl && source !== undefined ? (
        <Compare
          resultUrl={g.outputUrl}
          sourceUrl={source}
          fps={fps}
          fpsKnown={fpsKnown}
          resultName={resultName(g)}
          below={(player) => <Notes generationId={g.id} player={player} lengthSeconds={g.outputDuration} />}
        />
      ) : null}
      <p class="download">
        {download ? (
          <a href={download} download={fileName} class="button">
            Download {fileName}
          </a>
        ) : null}
      </p>
      <ErrorMessage error={error} />
      {q?.dub ? (
        <section class="card" aria-labelledby="dubbing-title">
          <h2 id="dubbing-title">Dubbing</h2>
          <p>
            <a href={href(`dub/${encodeURIComponent(g.id)}`)}>Open the dubbing editor</a>: review the
            translation segment by segment, correct it, and download the subtitles.
          </p>
        </section>
      ) : null}
      <QualityReport quality={q} />
    </>
  );
}

/** The name the download is served as: the signed URL's `name` (local storage signs it), else the stored one. */
function fileNameOf(g: Generation, url: string | null): string {
  let named: string | null = null;
  try {
    if (url) named = new URL(url, location.href).searchParams.get('name');
  } catch {
    // not a URL: fall back to the stored name
  }
  const stored = g.outputFileName ? g.outputFileName.replace(/\.[A-Za-z0-9]{1,5}$/, '') + '.mp4' : null;
  return named || stored || `generation-${g.id}.mp4`;
}

function Delete({ g }: { g: Generation }) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const remove = async () => {
    try {
      await api('DELETE', `/v2/generations/${encodeURIComponent(g.id)}`);
      navigate('history');
    } catch (e) {
      setError(e);
    }
  };
  return (
    <div class="danger-zone">
      {asking ? (
        <div role="group" aria-labelledby="delete-question" class="confirm">
          <p id="delete-question">Delete this generation and its output? This cannot be undone.</p>
          <button type="button" class="danger" onClick={remove}>
            Yes, delete it
          </button>{' '}
          <button type="button" class="secondary" onClick={() => setAsking(false)}>
            Keep it
          </button>
        </div>
      ) : (
        <button type="button" class="secondary" onClick={() => setAsking(true)}>
          Delete generation
        </button>
      )}
      <ErrorMessage error={error} />
    </div>
  );
}

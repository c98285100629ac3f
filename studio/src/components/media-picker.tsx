import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get } from '../api.js';
import type { Asset, AssetKind } from '../types.js';
import { kindOfFile, uploadAsset } from './upload.js';
import { ErrorMessage } from './error-message.js';

const WORDS: Record<AssetKind, { noun: string; accept: string }> = {
  VIDEO: { noun: 'video', accept: 'video/*' },
  AUDIO: { noun: 'recording', accept: 'audio/*' },
  IMAGE: { noun: 'photo', accept: 'image/*' },
};

export function describeAsset(a: Asset): string {
  const parts: string[] = [];
  if (typeof a.durationSeconds === 'number') parts.push(`${a.durationSeconds.toFixed(1)} s`);
  if (typeof a.width === 'number' && typeof a.height === 'number') parts.push(`${a.width}×${a.height}`);
  return parts.join(', ');
}

interface Props {
  /** Names the field for labels and the drop zone: "video" gives "Choose a video file". */
  kind: AssetKind;
  title: string;
  value: Asset | null;
  onChange: (a: Asset | null) => void;
  projectId?: string;
  /** The server's words about this input (a refused generation naming it). */
  error?: ApiError | null;
  hint?: string;
}

/**
 * One media input: drop a file or choose one (uploaded at once, with a progress bar), or reuse an
 * earlier upload of the same type from the library.
 */
export function MediaPicker({ kind, title, value, onChange, projectId, error, hint }: Props) {
  const { noun, accept } = WORDS[kind];
  const [progress, setProgress] = useState<{ name: string; fraction: number } | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const [over, setOver] = useState(false);
  const [libraryOpen, setLibraryOpen] = useState(false);
  const abort = useRef<AbortController | null>(null);
  const id = `media-${kind.toLowerCase()}`;

  useEffect(() => () => abort.current?.abort(), []);

  const send = async (file: File) => {
    abort.current?.abort();
    const ac = new AbortController();
    abort.current = ac;
    setFailure(null);
    if (kindOfFile(file, kind) !== kind) {
      setFailure(new ApiError(`${file.name} is not a ${noun}.`, 0, undefined, `Choose a ${noun} file.`));
      return;
    }
    setProgress({ name: file.name, fraction: 0 });
    try {
      const asset = await uploadAsset(file, {
        kind,
        projectId,
        signal: ac.signal,
        onProgress: (fraction) => setProgress({ name: file.name, fraction }),
      });
      // Canceled while the server checked the file: it is stored, but not chosen.
      if (!ac.signal.aborted) onChange(asset);
    } catch (e) {
      if (!ac.signal.aborted) setFailure(e);
    } finally {
      if (abort.current === ac) {
        abort.current = null;
        setProgress(null);
      }
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    const file = e.dataTransfer?.files[0];
    if (file) void send(file);
  };
  const percent = progress ? Math.round(progress.fraction * 100) : 0;

  return (
    <fieldset class="media-slot" aria-describedby={hint ? `${id}-hint` : undefined}>
      <legend>{title}</legend>
      {hint ? (
        <p id={`${id}-hint`} class="muted">
          {hint}
        </p>
      ) : null}
      {value ? (
        <div class="chosen">
          <p>
            <strong>{value.name}</strong>
            {describeAsset(value) ? <span class="muted"> · {describeAsset(value)}</span> : null}
          </p>
          {value.url && kind === 'AUDIO' ? (
            <audio controls preload="metadata" src={value.url} aria-label={`Listen to ${value.name}`} />
          ) : null}
          {value.url && kind === 'IMAGE' ? (
            <img class="thumb" src={value.url} alt={`The chosen photo, ${value.name}`} />
          ) : null}
          <button type="button" class="secondary" onClick={() => onChange(null)}>
            Use another {noun}
          </button>
        </div>
      ) : (
        <div
          class={`drop-zone${over ? ' over' : ''}`}
          data-testid={`${id}-drop`}
          onDragOver={(e) => (e.preventDefault(), setOver(true))}
          onDragLeave={() => setOver(false)}
          onDrop={onDrop}
        >
          <p>Drag a {noun} file here, or</p>
          <label class="file-button">
            Choose a {noun} file
            <input
              type="file"
              accept={accept}
              class="sr-only"
              disabled={!!progress}
              onChange={(e) => {
                const file = e.currentTarget.files?.[0];
                e.currentTarget.value = '';
                if (file) void send(file);
              }}
            />
          </label>
          <button
            type="button"
            class="secondary"
            aria-expanded={libraryOpen}
            aria-controls={`${id}-library`}
            onClick={() => setLibraryOpen(!libraryOpen)}
          >
            Pick an earlier {noun}
          </button>
        </div>
      )}
      {progress ? (
        <div class="upload-progress">
          <progress max={100} value={percent} aria-label={`Uploading ${progress.name}`} />
          <button type="button" class="link" onClick={() => abort.current?.abort()}>
            Cancel upload
          </button>
        </div>
      ) : null}
      {/* Announced in steps of a tenth, so a screen reader is not flooded. */}
      <p role="status" class="muted">
        {progress
          ? percent >= 100
            ? `Checking ${progress.name}…`
            : `Uploading ${progress.name}: ${Math.floor(percent / 10) * 10} %`
          : value
            ? `${value.name} is ready.`
            : ''}
      </p>
      <ErrorMessage error={failure ?? error} />
      {libraryOpen && !value ? (
        <Library
          id={`${id}-library`}
          kind={kind}
          noun={noun}
          onPick={(a) => {
            setLibraryOpen(false);
            onChange(a);
          }}
        />
      ) : null}
    </fieldset>
  );
}

interface AssetPage {
  items: Asset[];
  nextCursor?: string;
  totalCount: number;
}

/** Earlier uploads of one type, newest first, searchable by name. */
function Library({
  id,
  kind,
  noun,
  onPick,
}: {
  id: string;
  kind: AssetKind;
  noun: string;
  onPick: (a: Asset) => void;
}) {
  const [search, setSearch] = useState('');
  const [page, setPage] = useState<AssetPage | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    const q = new URLSearchParams({ types: kind, limit: '20' });
    if (search.trim()) q.set('searchQuery', search.trim());
    const t = setTimeout(() => {
      get<AssetPage>(`/v2/assets?${q}`).then(
        (p) => live && (setPage(p), setError(null)),
        (e) => live && setError(e),
      );
    }, 200);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [kind, search]);
  return (
    <div id={id} class="library">
      <label>
        Search earlier {noun}s by name
        <input type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} />
      </label>
      <ErrorMessage error={error} />
      {page === null ? (
        <p>Loading…</p>
      ) : page.items.length === 0 ? (
        <p>No {noun}s uploaded yet.</p>
      ) : (
        <ul aria-label={`Earlier ${noun}s`}>
          {page.items.map((a) => (
            <li key={a.id}>
              <button type="button" class="link" onClick={() => onPick(a)}>
                {a.name}
              </button>{' '}
              <span class="muted">
                {describeAsset(a)}
                {describeAsset(a) ? ' · ' : ''}
                uploaded {new Date(a.createdAt).toLocaleString()}
              </span>
            </li>
          ))}
        </ul>
      )}
      {page && page.totalCount > page.items.length ? (
        <p class="muted">
          Showing the newest {page.items.length} of {page.totalCount}: search to find others.
        </p>
      ) : null}
    </div>
  );
}

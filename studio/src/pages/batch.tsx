// The Batch page: a JSONL file, or one built here from media files and a CSV of pairs; always a dry run
// first (POST /v2/batch with dry_run), and only a file that passed it can be run; then its progress,
// and the organization's batches with their results files.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { kindOfFile, uploadAsset } from '../components/upload.js';
import { useAction } from '../components/use-action.js';
import { navigate, type Route } from '../router.js';
import type { Batch, BatchValidated } from '../types.js';
import {
  buildJsonl,
  previewJsonl,
  readPairs,
  refusedLine,
  type CsvReading,
  type JsonlLine,
} from './batch-build.js';
import { BatchList, BatchProgress } from './batch-progress.js';
import { FolderSource, JsonlSource, filesByName } from './batch-sources.js';
import { SYNC_MODES } from './new-options.js';

type Mode = 'folder' | 'jsonl';
const MODELS = [
  ['lipsync-2', 'Standard'],
  ['lipsync-2-pro', 'More detail (slower, costs more)'],
  ['sync-3', 'Sync 3'],
] as const;

/** The outcome of the last dry run, and the exact file it judged (the one "Run" sends). */
type Verdict =
  | { ok: true; file: Blob; name: string; summary: BatchValidated['summary'] }
  | { ok: false; error: ApiError; line: number | null };

export function BatchPage({ route }: { route: Route }) {
  const [mode, setMode] = useState<Mode>('folder');
  const [jsonl, setJsonl] = useState<{ file: File; lines: JsonlLine[] } | null>(null);
  const [files, setFiles] = useState<File[]>([]);
  const [csv, setCsv] = useState<{ file: File; text: string } | null>(null);
  const [model, setModel] = useState('lipsync-2');
  const [syncMode, setSyncMode] = useState('cut_off');
  const [webhookUrl, setWebhookUrl] = useState('');
  const [uploads, setUploads] = useState<{ name: string; fraction: number }[]>([]);
  const { busy, doing, error, run: act } = useAction<'checking' | 'running'>();
  const [verdict, setVerdict] = useState<Verdict | null>(null);
  const [listKey, setListKey] = useState(0);
  /** Asset ids of files already uploaded from this page: a second dry run uploads nothing again. */
  const assetIds = useRef(new Map<File, string>());

  const byName = useMemo(() => filesByName(files), [files]);
  const reading: CsvReading | null = useMemo(
    () => (csv ? readPairs(csv.text, (n) => byName.has(n)) : null),
    [csv, byName],
  );
  const csvProblems = reading
    ? reading.problems.length + reading.rows.filter((r) => r.problems.length).length
    : 0;
  // Any change to what would be sent makes the last verdict stale: check again before running.
  useEffect(() => setVerdict(null), [mode, jsonl, files, csv, model, syncMode, webhookUrl]);

  const chooseJsonl = async (file: File) => setJsonl({ file, lines: previewJsonl(await file.text()) });
  const chooseCsv = async (file: File) => setCsv({ file, text: await file.text() });
  const addFiles = (more: File[]) =>
    setFiles((had) => [...had.filter((f) => !more.some((m) => m.name === f.name)), ...more]);

  /** Uploads each distinct file the pairs use, once, then writes the JSONL that names their assets. */
  const buildFromFolder = async (r: CsvReading): Promise<Blob> => {
    const needed: { file: File; kind: 'VIDEO' | 'AUDIO' }[] = [];
    for (const row of r.rows)
      for (const [name, kind] of [
        [row.video, 'VIDEO'],
        [row.audio, 'AUDIO'],
      ] as const) {
        const file = byName.get(name)!;
        if (!assetIds.current.has(file) && !needed.some((n) => n.file === file)) needed.push({ file, kind });
      }
    setUploads(needed.map((n) => ({ name: n.file.name, fraction: 0 })));
    for (const [i, n] of needed.entries()) {
      const asset = await uploadAsset(n.file, {
        kind: kindOfFile(n.file, n.kind),
        onProgress: (fraction) => setUploads((u) => u.map((x, j) => (j === i ? { ...x, fraction } : x))),
      });
      assetIds.current.set(n.file, asset.id);
    }
    setUploads([]);
    const text = buildJsonl(r.rows, (name) => assetIds.current.get(byName.get(name)!)!, { model, syncMode });
    return new Blob([text], { type: 'application/x-ndjson' });
  };

  const form = (file: Blob, name: string, dryRun: boolean) => {
    const fd = new FormData();
    if (dryRun) fd.append('dry_run', 'true');
    if (webhookUrl.trim()) fd.append('webhook_url', webhookUrl.trim());
    fd.append('input', file, name);
    return fd;
  };

  const check = () => {
    setVerdict(null);
    void act(async () => {
      let file: Blob;
      let name: string;
      if (mode === 'jsonl') {
        // The file's own bytes: the server judges exactly what was chosen (a BOM or CRLF included).
        file = jsonl!.file;
        name = jsonl!.file.name;
      } else {
        file = await buildFromFolder(reading!).catch((e: unknown) => {
          setUploads([]);
          throw e;
        });
        name = `${csv!.file.name.replace(/\.csv$/i, '')}.jsonl`;
      }
      try {
        const v = await api<BatchValidated>('POST', '/v2/batch', form(file, name, true));
        setVerdict({ ok: true, file, name, summary: v.summary });
      } catch (e) {
        // A refusal of the file itself is the verdict; other answers (plan, rate limit, outage) are errors.
        if (!(e instanceof ApiError) || ![400, 413, 422].includes(e.status)) throw e;
        setVerdict({ ok: false, error: e, line: refusedLine(e.body, e.message) });
      }
    }, 'checking');
  };

  const run = () => {
    if (!verdict?.ok) return;
    const { file, name } = verdict;
    void act(async () => {
      const b = await api<Batch>('POST', '/v2/batch', form(file, name, false));
      setVerdict(null);
      setListKey((k) => k + 1);
      navigate(`batch/${encodeURIComponent(b.id)}`);
    }, 'running');
  };

  const ready =
    mode === 'jsonl'
      ? !!jsonl
      : !!reading && reading.rows.length > 0 && csvProblems === 0 && files.length > 0;
  const refused = verdict && !verdict.ok ? verdict.line : null;

  return (
    <div class="batch-page">
      <h1>Batch</h1>
      {route.id ? (
        <BatchProgress key={route.id} id={route.id} onEnded={() => setListKey((k) => k + 1)} />
      ) : null}
      <section aria-labelledby="batch-new-title">
        <h2 id="batch-new-title">A new batch</h2>
        <fieldset class="batch-mode">
          <legend>Make it from</legend>
          <label>
            <input
              type="radio"
              name="batch-mode"
              checked={mode === 'folder'}
              onChange={() => setMode('folder')}
            />{' '}
            Media files and a CSV of pairs
          </label>
          <label>
            <input
              type="radio"
              name="batch-mode"
              checked={mode === 'jsonl'}
              onChange={() => setMode('jsonl')}
            />{' '}
            A JSONL file
          </label>
        </fieldset>

        {mode === 'jsonl' ? (
          <JsonlSource file={jsonl?.file ?? null} onFile={(f) => void chooseJsonl(f)} />
        ) : (
          <>
            <FolderSource
              files={files}
              csv={csv?.file ?? null}
              onFiles={addFiles}
              onCsv={(f) => void chooseCsv(f)}
              onClear={() => setFiles([])}
            />
            <fieldset>
              <legend>Every pair</legend>
              <label for="batch-model">Model</label>
              <select id="batch-model" value={model} onChange={(e) => setModel(e.currentTarget.value)}>
                {MODELS.map(([id, name]) => (
                  <option key={id} value={id}>
                    {name} ({id})
                  </option>
                ))}
              </select>
              <label for="batch-sync">When the video and the sound differ in length</label>
              <select id="batch-sync" value={syncMode} onChange={(e) => setSyncMode(e.currentTarget.value)}>
                {SYNC_MODES.map(([id, name]) => (
                  <option key={id} value={id}>
                    {name}
                  </option>
                ))}
              </select>
            </fieldset>
          </>
        )}
        <label for="batch-webhook">Webhook address when the batch ends (optional)</label>
        <input
          id="batch-webhook"
          type="url"
          value={webhookUrl}
          placeholder="https://…"
          onInput={(e) => setWebhookUrl(e.currentTarget.value)}
        />

        {mode === 'jsonl' && jsonl ? <JsonlPreview lines={jsonl.lines} refused={refused} /> : null}
        {mode === 'folder' && reading ? <PairsPreview reading={reading} refused={refused} /> : null}

        {uploads.length ? (
          <ul class="batch-uploads" aria-label="Uploads">
            {uploads.map((u) => (
              <li key={u.name}>
                <label>
                  {u.name} <progress max={100} value={Math.round(u.fraction * 100)} />
                </label>
              </li>
            ))}
          </ul>
        ) : null}

        <Verdict verdict={verdict} />
        <ErrorMessage error={error} />
        <div class="actions">
          <button type="button" disabled={!ready || busy} onClick={check}>
            {doing === 'checking' ? 'Checking…' : 'Check the batch (dry run)'}
          </button>
          <button
            type="button"
            disabled={!verdict?.ok || busy}
            aria-describedby="batch-run-hint"
            onClick={run}
          >
            {doing === 'running' ? 'Starting…' : 'Run the batch'}
          </button>
          <span id="batch-run-hint" class="muted">
            {verdict?.ok ? '' : 'A batch runs only after a dry run of the same file passed.'}
          </span>
        </div>
      </section>
      <BatchList refreshKey={listKey} current={route.id} />
    </div>
  );
}

function Verdict({ verdict }: { verdict: Verdict | null }) {
  if (!verdict) return null;
  if (!verdict.ok)
    return (
      <div data-testid="batch-verdict">
        <h3>Dry run: refused</h3>
        <ErrorMessage error={verdict.error} />
        <p class="muted">
          Nothing was created.
          {verdict.line ? ' The check stops at the first refused line: fix it and check again.' : ''}
        </p>
      </div>
    );
  const s = verdict.summary;
  const models = Object.entries(s.models)
    .map(([m, n]) => `${m} × ${n}`)
    .join(', ');
  return (
    <div class="batch-ok" role="status" data-testid="batch-verdict">
      <h3>Dry run: passed</h3>
      <p>
        All {s.total_records} records are valid ({s.request_ids.first} … {s.request_ids.last}); models:{' '}
        {models}; {s.assets_resolved} asset references resolved. Nothing was created yet.
      </p>
    </div>
  );
}

function JsonlPreview({ lines, refused }: { lines: JsonlLine[]; refused: number | null }) {
  return (
    <div class="table-scroll">
      <table class="batch-preview">
        <caption>
          {lines.length} record{lines.length === 1 ? '' : 's'} in the file
        </caption>
        <thead>
          <tr>
            <th scope="col">Line</th>
            <th scope="col">request_id</th>
            <th scope="col">Model</th>
            <th scope="col">Inputs</th>
            <th scope="col">Output file name</th>
          </tr>
        </thead>
        <tbody>
          {lines.map((l) => (
            <tr key={l.line} class={l.line === refused ? 'refused' : undefined}>
              <th scope="row">
                {l.line}
                {l.line === refused ? <span class="error-summary"> (refused by the dry run)</span> : null}
              </th>
              {l.unreadable ? (
                <td colSpan={4}>Not a JSON object</td>
              ) : (
                <>
                  <td>{l.requestId ?? '—'}</td>
                  <td>{l.model ?? '—'}</td>
                  <td>{l.inputs ?? '—'}</td>
                  <td>{l.outputFileName ?? ''}</td>
                </>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function PairsPreview({ reading, refused }: { reading: CsvReading; refused: number | null }) {
  const bad = reading.rows.filter((r) => r.problems.length).length + reading.problems.length;
  return (
    <>
      {bad ? (
        <div class="error" role="alert">
          <p>
            The CSV has {bad} problem line{bad === 1 ? '' : 's'}; fix {bad === 1 ? 'it' : 'them'} (or choose
            the missing files) before checking.
          </p>
          <ul>
            {reading.problems.map((p) => (
              <li key={p.line}>
                CSV line {p.line}: {p.message}
              </li>
            ))}
            {reading.rows
              .filter((r) => r.problems.length)
              .map((r) => (
                <li key={r.csvLine}>
                  CSV line {r.csvLine}: {r.problems.join(' ')}
                </li>
              ))}
          </ul>
        </div>
      ) : null}
      {reading.rows.length ? (
        <div class="table-scroll">
          <table class="batch-preview">
            <caption>
              {reading.rows.length} pair{reading.rows.length === 1 ? '' : 's'} in the CSV
            </caption>
            <thead>
              <tr>
                <th scope="col">Record</th>
                <th scope="col">CSV line</th>
                <th scope="col">Video</th>
                <th scope="col">Audio</th>
                <th scope="col">Output file name</th>
                <th scope="col">Problem</th>
              </tr>
            </thead>
            <tbody>
              {reading.rows.map((r, i) => (
                <tr key={r.csvLine} class={r.problems.length || i + 1 === refused ? 'refused' : undefined}>
                  <th scope="row">{i + 1}</th>
                  <td>{r.csvLine}</td>
                  <td>{r.video}</td>
                  <td>{r.audio}</td>
                  <td>{r.outputFileName ?? ''}</td>
                  <td>{r.problems.join(' ') || (i + 1 === refused ? 'Refused by the dry run' : '')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

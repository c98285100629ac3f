// The two ways in: a JSONL file (dropped or chosen), or media files (a folder or several files) with a
// CSV of pairs naming them. Each tells the page what was chosen; the page builds and sends.
import { useState } from 'preact/hooks';

function DropZone({
  id,
  label,
  accept,
  onFile,
}: {
  id: string;
  label: string;
  accept: string;
  onFile: (f: File) => void;
}) {
  const [over, setOver] = useState(false);
  return (
    <div
      class={`drop-zone${over ? ' over' : ''}`}
      data-testid={`${id}-drop`}
      onDragOver={(e) => (e.preventDefault(), setOver(true))}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        const f = e.dataTransfer?.files[0];
        if (f) onFile(f);
      }}
    >
      <p>Drag the file here, or</p>
      <label class="file-button">
        {label}
        <input
          type="file"
          accept={accept}
          class="sr-only"
          onChange={(e) => {
            const f = e.currentTarget.files?.[0];
            e.currentTarget.value = '';
            if (f) onFile(f);
          }}
        />
      </label>
    </div>
  );
}

export function JsonlSource({ file, onFile }: { file: File | null; onFile: (f: File) => void }) {
  return (
    <fieldset>
      <legend>The JSONL file</legend>
      <p class="muted">
        One generation request a line: {'{"request_id", "endpoint": "/v2/generate", "payload"}'}, 20 to 500
        lines, UTF-8 with LF line endings.
      </p>
      <DropZone
        id="batch-jsonl"
        label="Choose a JSONL file"
        accept=".jsonl,.ndjson,.json,.txt"
        onFile={onFile}
      />
      {file ? (
        <p>
          Chosen: <strong>{file.name}</strong> ({file.size} bytes)
        </p>
      ) : null}
    </fieldset>
  );
}

/** Files by the names a CSV may use: the file's name, and its path inside the chosen folder. */
export function filesByName(list: File[]): Map<string, File> {
  const byName = new Map<string, File>();
  for (const f of list) {
    byName.set(f.name, f);
    const rel = f.webkitRelativePath;
    if (rel) {
      byName.set(rel, f);
      byName.set(rel.split('/').slice(1).join('/'), f);
    }
  }
  return byName;
}

export function FolderSource({
  files,
  csv,
  onFiles,
  onCsv,
  onClear,
}: {
  files: File[];
  csv: File | null;
  onFiles: (f: File[]) => void;
  onCsv: (f: File) => void;
  onClear: () => void;
}) {
  const add = (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    const chosen = [...(input.files ?? [])];
    input.value = '';
    if (chosen.length) onFiles(chosen);
  };
  // The folder input. Preact sets it as the DOM property (a boolean, so true, not ''); its JSX typings
  // do not name it.
  const folder = { webkitdirectory: true } as Record<string, boolean>;
  return (
    <>
      <fieldset>
        <legend>The media files</legend>
        <p class="muted">
          A folder, or several files at once (choose again to add more). Each file is uploaded once, however
          many pairs use it.
        </p>
        <div class="drop-zone">
          <label class="file-button">
            Choose a folder
            <input type="file" class="sr-only" multiple {...folder} onChange={add} />
          </label>
          <label class="file-button">
            Choose media files
            <input type="file" class="sr-only" multiple accept="video/*,audio/*" onChange={add} />
          </label>
          {files.length ? (
            <button type="button" class="secondary" onClick={onClear}>
              Forget the chosen files
            </button>
          ) : null}
        </div>
        <p aria-live="polite">
          {files.length
            ? `${files.length} file${files.length === 1 ? '' : 's'} chosen: ${files
                .slice(0, 6)
                .map((f) => f.name)
                .join(', ')}${files.length > 6 ? '…' : ''}`
            : 'No file chosen yet.'}
        </p>
      </fieldset>
      <fieldset>
        <legend>The CSV of pairs</legend>
        <p class="muted">
          A header row with the columns <code>video</code>, <code>audio</code> and optionally{' '}
          <code>outputFileName</code>, then one pair a row, naming the chosen files.
        </p>
        <DropZone id="batch-csv" label="Choose the CSV of pairs" accept=".csv,text/csv" onFile={onCsv} />
        {csv ? (
          <p>
            Chosen: <strong>{csv.name}</strong>
          </p>
        ) : null}
      </fieldset>
    </>
  );
}

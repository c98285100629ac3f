// What the Batch page sends: a CSV of pairs read against the chosen files, the JSONL records built
// from it once the files are assets, and a JSONL file's lines read for the preview. Pure: no I/O.

export interface CsvRow {
  /** The CSV's own line number (1 is the header), as a spreadsheet shows it. */
  csvLine: number;
  video: string;
  audio: string;
  outputFileName?: string;
  problems: string[];
}

export interface CsvReading {
  rows: CsvRow[];
  /** Problems of the file itself (header), by CSV line. */
  problems: { line: number; message: string }[];
}

const COLUMNS = ['video', 'audio', 'outputfilename'] as const;

/** RFC 4180 fields: quotes around a field, "" inside quotes, CRLF or LF; each row with its first line. */
export function splitCsv(text: string): { line: number; fields: string[] }[] {
  const rows: { line: number; fields: string[] }[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  const src = text.replace(/^\uFEFF/, '');
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (quoted) {
      if (c === '"' && src[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        field += c;
      }
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && src[i + 1] === '\n') i++;
      fields.push(field);
      if (fields.some((f) => f.trim() !== '')) rows.push({ line: rowLine, fields });
      fields = [];
      field = '';
      rowLine = ++line;
    } else field += c;
  }
  fields.push(field);
  if (fields.some((f) => f.trim() !== '')) rows.push({ line: rowLine, fields });
  return rows;
}

/**
 * Reads the CSV of pairs: a header naming video, audio and optionally outputFileName (any case, any
 * order), then one pair a row. `has` says whether a name is among the chosen files.
 */
export function readPairs(text: string, has: (name: string) => boolean): CsvReading {
  const [header, ...body] = splitCsv(text);
  if (!header) return { rows: [], problems: [{ line: 1, message: 'The CSV is empty.' }] };
  const names = header.fields.map((f) =>
    f
      .trim()
      .toLowerCase()
      .replace(/[\s_-]/g, ''),
  );
  const problems: CsvReading['problems'] = [];
  const unknown = names.filter((n) => !(COLUMNS as readonly string[]).includes(n));
  if (unknown.length)
    problems.push({
      line: header.line,
      message: `Unknown column ${JSON.stringify(unknown[0])}: the columns are video, audio and outputFileName.`,
    });
  for (const needed of ['video', 'audio'])
    if (!names.includes(needed))
      problems.push({ line: header.line, message: `The header has no "${needed}" column.` });
  if (problems.length) return { rows: [], problems };
  const at = (fields: string[], col: string) => (fields[names.indexOf(col)] ?? '').trim();
  const rows = body.map(({ line, fields }): CsvRow => {
    const row: CsvRow = {
      csvLine: line,
      video: at(fields, 'video'),
      audio: at(fields, 'audio'),
      problems: [],
    };
    const out = names.includes('outputfilename') ? at(fields, 'outputfilename') : '';
    if (out) row.outputFileName = out;
    // Fewer values is fine when only the optional column is left out (checked below).
    if (fields.length > names.length)
      row.problems.push(`${fields.length} values where the header has ${names.length} columns.`);
    for (const col of ['video', 'audio'] as const) {
      const name = row[col];
      if (!name) row.problems.push(`No ${col} file named.`);
      else if (!has(name)) row.problems.push(`${name} is not among the chosen files.`);
    }
    return row;
  });
  if (!rows.length) problems.push({ line: header.line, message: 'The CSV has a header but no pairs.' });
  return { rows, problems };
}

export interface RecordSettings {
  model: string;
  syncMode: string;
}

/** One JSONL line per row, the files referenced by their asset ids; request ids name the CSV line. */
export function buildJsonl(rows: CsvRow[], assetIdOf: (name: string) => string, s: RecordSettings): string {
  return rows
    .map((r) =>
      JSON.stringify({
        request_id: `csv-line-${r.csvLine}`,
        endpoint: '/v2/generate',
        payload: {
          model: s.model,
          input: [
            { type: 'video', assetId: assetIdOf(r.video) },
            { type: 'audio', assetId: assetIdOf(r.audio) },
          ],
          options: { sync_mode: s.syncMode },
          ...(r.outputFileName ? { outputFileName: r.outputFileName } : {}),
        },
      }),
    )
    .map((l) => `${l}\n`)
    .join('');
}

export interface JsonlLine {
  /** Counts non-empty lines from 1, as the server's "Line N" does. */
  line: number;
  requestId?: string;
  model?: string;
  inputs?: string;
  outputFileName?: string;
  /** Set when the line is not a JSON object (the dry run then refuses it in the catalogue's words). */
  unreadable?: boolean;
}

/** A JSONL file's records for the preview table. */
export function previewJsonl(text: string): JsonlLine[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((raw, i): JsonlLine => {
      const line = i + 1;
      let o: unknown;
      try {
        o = JSON.parse(raw);
      } catch {
        return { line, unreadable: true };
      }
      if (!o || typeof o !== 'object' || Array.isArray(o)) return { line, unreadable: true };
      const rec = o as { request_id?: unknown; payload?: Record<string, unknown> };
      const p = rec.payload && typeof rec.payload === 'object' ? rec.payload : {};
      const input = Array.isArray(p.input) ? (p.input as { type?: unknown }[]) : [];
      return {
        line,
        requestId: typeof rec.request_id === 'string' ? rec.request_id : undefined,
        model: typeof p.model === 'string' ? p.model : undefined,
        inputs: input.map((x) => String(x?.type ?? '?')).join(' + ') || undefined,
        outputFileName: typeof p.outputFileName === 'string' ? p.outputFileName : undefined,
      };
    });
}

/**
 * The record a refusal names. The API states the line in its message ("Line N: …", its documented
 * form; lineNumber only for dialogue-edit refusals): used only to mark that row in the preview.
 */
export function refusedLine(body: Record<string, unknown>, message: string): number | null {
  if (typeof body.lineNumber === 'number') return body.lineNumber;
  const m = /^Line (\d+)\b/.exec(message);
  return m ? Number(m[1]) : null;
}

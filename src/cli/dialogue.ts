// `lipsync transcribe`, `lipsync transcript correct` and `lipsync dialogue`: the dialogue-editing flow
// from the command line through a running server's API, as any client would run it (upload, POST
// /v2/transcriptions, PATCH /v2/transcriptions/{id}, POST /v2/dialogue-edits, POST /v2/generate with
// dialogueEdit). Progress goes to stderr; signed URLs are never printed: they grant access.
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import {
  apiError,
  apiFrom,
  ClientError,
  download,
  retryAfterSeconds,
  connectionOptions,
  sleep,
  StatusLine,
  uploadAsset,
  usageError,
  type Api,
} from './http.js';

interface Word {
  id: string;
  text: string;
  startMs: number;
  endMs: number;
}
type Transcript = { segments: { id: string; words: Word[] }[] };
type Edit = { kind: 'change'; wordId: string; replacement: string } | { kind: 'remove'; wordIds: string[] };
type Print = (json: boolean, obj: Record<string, unknown>, text: string) => void;

interface ApiOpts {
  server?: string;
  key?: string;
  json?: boolean;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];
const words = (t: Transcript) => t.segments.flatMap((s) => s.words);

function nonNegativeInt(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw usageError(`--${name} must be a whole number of milliseconds, got ${v}`);
  return Number(v);
}

/** `WORD_ID=TEXT`; syntax only, so that a typo costs no upload. */
function parseChange(v: string): Extract<Edit, { kind: 'change' }> {
  const m = /^([^\s=]+)=([\s\S]*)$/.exec(v);
  if (!m || m[2].trim() === '') throw usageError(`--change ${JSON.stringify(v)}: expected WORD_ID=TEXT`);
  return { kind: 'change', wordId: m[1], replacement: m[2].trim() };
}

/** `--word WORD_ID=TEXT` of `transcript correct`: what was really said there. */
function parseWordCorrection(v: string): { id: string; text: string } {
  const m = /^([^\s=]+)=([\s\S]*)$/.exec(v);
  if (!m || m[2].trim() === '') throw usageError(`--word ${JSON.stringify(v)}: expected WORD_ID=TEXT`);
  return { id: m[1], text: m[2].trim() };
}

/** `FIRST_ID..LAST_ID` (or one id). */
function parseRemove(v: string): [string, string] {
  const m = /^([^\s.]+)(?:\.\.([^\s.]+))?$/.exec(v);
  if (!m) throw usageError(`--remove ${JSON.stringify(v)}: expected FIRST_ID..LAST_ID or WORD_ID`);
  return [m[1], m[2] ?? m[1]];
}

/**
 * A range becomes the contiguous ids of the transcript. Ids the transcript lacks are passed on as
 * given: the API names them in its 400, the same answer as for any unknown id.
 */
function expandRemove([first, last]: [string, string], t: Transcript): Edit {
  const ids = words(t).map((w) => w.id);
  const a = ids.indexOf(first);
  const b = ids.indexOf(last);
  if (a < 0 || b < 0) return { kind: 'remove', wordIds: first === last ? [first] : [first, last] };
  if (b < a) throw usageError(`--remove ${first}..${last}: ${last} comes before ${first} in the transcript`);
  return { kind: 'remove', wordIds: ids.slice(a, b + 1) };
}

/** A transcript file: the job `lipsync transcribe --out` writes, or a bare {segments}. */
async function readTranscriptFile(path: string): Promise<Transcript> {
  let raw: any;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw usageError(`--transcript ${path}: ${(err as Error).message}`);
  }
  const t = raw?.transcript ?? raw;
  if (!Array.isArray(t?.segments) || !t.segments.every((s: any) => Array.isArray(s?.words)))
    throw usageError(`--transcript ${path}: not a transcript (the file of \`lipsync transcribe --out\`)`);
  return t as Transcript;
}

/** GETs a job until it leaves PENDING/PROCESSING, honoring the server's Retry-After. */
async function follow(api: Api, path: string, what: string, first: any, line: StatusLine | null) {
  let job = first;
  let retryAfter: string | null = null;
  const started = Date.now();
  while (job.status === 'PENDING' || job.status === 'PROCESSING') {
    const s = Math.round((Date.now() - started) / 1000);
    line?.update(`${what} ${job.id}: ${String(job.status).toLowerCase()} (${s} s)`);
    await sleep(retryAfterSeconds(retryAfter, 1) * 1000);
    const r = await api('GET', path);
    if (r.status !== 200) throw apiError(`reading the ${what}`, r);
    job = r.json;
    retryAfter = r.headers.get('retry-after');
  }
  line?.update(`${what} ${job.id}: ${String(job.status).toLowerCase()}`);
  line?.done();
  if (job.status === 'FAILED')
    throw new ClientError(`${what} ${job.id} ended FAILED: ${job.error?.code}: ${job.error?.message ?? ''}`, {
      id: job.id,
      status: job.status,
      errorCode: job.error?.code ?? null,
      error: job.error ?? null,
    });
  return job;
}

async function transcribe(
  api: Api,
  source: { type: string; url: string },
  window: { startMs?: number; endMs?: number },
  line: StatusLine | null,
) {
  const body = {
    [source.type === 'VIDEO' ? 'sourceVideoUrl' : 'sourceAudioUrl']: source.url,
    ...window,
  };
  const r = await api('POST', '/v2/transcriptions', body);
  if (r.status !== 201) throw apiError('creating the transcription', r);
  return follow(api, `/v2/transcriptions/${r.json.id}`, 'transcription', r.json, line);
}

const sec = (ms: number) => (ms / 1000).toFixed(3);

/** One line per word, `w12  1.230-1.480  word`: what a user reads to pick word ids. */
export function transcriptText(t: Transcript): string {
  const all = words(t);
  const width = Math.max(0, ...all.map((w) => w.id.length));
  return all.map((w) => `${w.id.padEnd(width)}  ${sec(w.startMs)}-${sec(w.endMs)}  ${w.text}`).join('\n');
}

interface CorrectOpts extends ApiOpts {
  word?: string[];
  revision?: string;
  out?: string;
}

/**
 * PATCH /v2/transcriptions/{id} with the corrected words (against --revision, else the current one),
 * followed until the alignment has made the next revision.
 */
async function correctTranscript(id: string, opts: CorrectOpts) {
  const words = (opts.word ?? []).map(parseWordCorrection);
  if (!words.length) throw usageError('give at least one --word WORD_ID=TEXT');
  if (opts.revision !== undefined && !/^[1-9]\d*$/.test(opts.revision))
    throw usageError(`--revision must be a whole number from 1, got ${opts.revision}`);
  const api = apiFrom(opts);
  const path = `/v2/transcriptions/${encodeURIComponent(id)}`;
  let revision = opts.revision === undefined ? undefined : Number(opts.revision);
  if (revision === undefined) {
    const r = await api('GET', path);
    if (r.status !== 200) throw apiError('reading the transcription', r);
    revision = r.json.revision as number;
  }
  const r = await api('PATCH', path, { revision, words });
  if (r.status !== 200 && r.status !== 202) throw apiError('correcting the transcription', r);
  const job = await follow(api, path, 'transcription', r.json, opts.json ? null : new StatusLine());
  // A correction that could not run leaves the transcript as it was, with the reason.
  if (job.error)
    throw new ClientError(`the correction of ${id} failed: ${job.error.code}: ${job.error.message ?? ''}`, {
      id,
      revision: job.revision,
      errorCode: job.error.code,
      error: job.error,
    });
  return job;
}

interface DialogueOpts extends ApiOpts {
  change?: string[];
  remove?: string[];
  transcript?: string;
  voice?: string;
  model: string;
  out: string;
  previewOut?: string;
}

async function dialogue(video: string, opts: DialogueOpts) {
  // Everything the user typed is checked before the first byte is uploaded.
  const changes = (opts.change ?? []).map(parseChange);
  const ranges = (opts.remove ?? []).map(parseRemove);
  if (!changes.length && !ranges.length) throw usageError('give at least one --change or --remove');
  const api = apiFrom(opts);
  let transcript = opts.transcript ? await readTranscriptFile(opts.transcript) : null;
  if (transcript) ranges.forEach((r) => expandRemove(r, transcript as Transcript));
  const line = opts.json ? null : new StatusLine();
  const note = (s: string) => line && process.stderr.write(`${s}\n`);

  note(`uploading ${video}`);
  const asset = await uploadAsset(api, video);
  if (asset.type !== 'VIDEO')
    throw usageError(`${video} is not a video (the server read it as ${asset.type})`);
  let transcriptionId: string | null = null;
  if (!transcript) {
    const job = await transcribe(api, asset, {}, line);
    transcriptionId = job.id;
    transcript = job.transcript as Transcript;
  }
  const edits: Edit[] = [...changes, ...ranges.map((r) => expandRemove(r, transcript as Transcript))];
  const created = await api('POST', '/v2/dialogue-edits', {
    transcript,
    edits,
    sourceVideoUrl: asset.url,
    ...(opts.voice ? { voiceId: opts.voice } : {}),
  });
  if (created.status !== 201) throw apiError('creating the dialogue edit', created);
  const id = created.json.id as string;
  const edit = await follow(api, `/v2/dialogue-edits/${id}`, 'dialogue edit', created.json, line);
  if (edit.status === 'COMPLETED_PARTIAL')
    process.stderr.write(`lipsync: partial preview: ${JSON.stringify(edit.partialDetail)}\n`);
  if (opts.previewOut) {
    await download(edit.previewAudioUrl, opts.previewOut, 'the preview');
    note(`preview written to ${opts.previewOut}`);
  }
  const summary = {
    dialogueEditId: id,
    transcriptionId,
    status: edit.status as string,
    previewDurationMs: edit.previewDurationMs as number,
    preview: opts.previewOut ?? null,
  };
  try {
    const generation = await render(api, { id, assetId: asset.id, model: opts.model, out: opts.out }, line);
    return { ...summary, ...generation };
  } catch (err) {
    // The preview stands on its own: its id goes with the failure, so the render can be retried.
    if (err instanceof ClientError)
      throw new ClientError(err.message, { ...summary, ...err.details }, err.exitCode);
    throw err;
  }
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'CANCELED', 'TIMED_OUT']);

/** POST /v2/generate with the edit, long-polled to the end, and the output downloaded. */
async function render(
  api: Api,
  a: { id: string; assetId: string; model: string; out: string },
  line: StatusLine | null,
) {
  const body = { model: a.model, input: [{ type: 'video', assetId: a.assetId }], dialogueEdit: { id: a.id } };
  // A network or proxy retry of this request cannot start a second render.
  const r = await api('POST', '/v2/generate', body, { 'idempotency-key': randomUUID() });
  if (r.status !== 201 && r.status !== 200) throw apiError('rendering the dialogue edit', r);
  let g = r.json;
  const started = Date.now();
  while (!TERMINAL.has(g.status)) {
    line?.update(
      `render ${g.id}: ${String(g.status).toLowerCase()} (${Math.round((Date.now() - started) / 1000)} s)`,
    );
    const p = await api('GET', `/v2/generate/${g.id}?wait=true&timeout=10`);
    if (p.status !== 200) throw apiError('reading the render', p);
    g = p.json;
  }
  line?.update(`render ${g.id}: ${String(g.status).toLowerCase()}`);
  line?.done();
  if (g.status !== 'COMPLETED')
    throw new ClientError(`render ${g.id} ended ${g.status}: ${g.errorCode ?? ''} ${g.error ?? ''}`.trim(), {
      generationId: g.id,
      errorCode: g.errorCode ?? null,
      error: g.error ?? null,
    });
  const d = await api('GET', `/v2/generations/${g.id}/download`);
  if (d.status !== 200) throw apiError('getting the download URL', d);
  await download(d.text.trim(), a.out, 'the output');
  return { generationId: g.id as string, output: a.out, outputDuration: g.outputDuration ?? null };
}

function apiOptions(cmd: Command): Command {
  return connectionOptions(cmd).option('--json', 'print one JSON object (no progress)');
}

export function registerDialogueCommands(program: Command, print: Print): void {
  apiOptions(
    program
      .command('transcribe')
      .description(
        'transcribe a video or audio file (uploaded first): one line per word with its id and times',
      )
      .argument('<file>')
      .option('--start <ms>', 'start of the window, milliseconds')
      .option('--end <ms>', 'end of the window, milliseconds')
      .option('--out <file>', 'also write the whole job as JSON (for `lipsync dialogue --transcript`)'),
  ).action(async (file: string, opts: ApiOpts & { start?: string; end?: string; out?: string }) => {
    const window = { startMs: nonNegativeInt('start', opts.start), endMs: nonNegativeInt('end', opts.end) };
    const api = apiFrom(opts);
    const asset = await uploadAsset(api, file);
    const job = await transcribe(api, asset, window, opts.json ? null : new StatusLine());
    if (opts.out) await writeFile(opts.out, JSON.stringify(job, null, 2) + '\n');
    print(!!opts.json, job, transcriptText(job.transcript as Transcript) || '(no words)');
  });

  const transcript = program.command('transcript').description("a transcription's words");
  apiOptions(
    transcript
      .command('correct')
      .description(
        'correct words the recognizer misheard (what was really said, not a new take): the next revision, re-timed to the audio',
      )
      .argument('<transcription-id>')
      .option('--word <id=text>', 'what was really said at a word id (repeatable)', collect)
      .option('--revision <n>', 'the revision the corrections were made on (default: the current one)')
      .option('--out <file>', 'also write the whole job as JSON (for `lipsync dialogue --transcript`)'),
  ).action(async (id: string, opts: CorrectOpts) => {
    const job = await correctTranscript(id, opts);
    if (opts.out) await writeFile(opts.out, JSON.stringify(job, null, 2) + '\n');
    print(
      !!opts.json,
      job,
      `${transcriptText(job.transcript as Transcript)}\nrevision ${job.revision as number}`,
    );
  });

  apiOptions(
    program
      .command('dialogue')
      .description(
        'change or remove words of a video: upload, transcribe, preview, render (needs the segment_lipsync and section_expansion flags)',
      )
      .argument('<video>')
      .option('--change <id=text>', 'replace a word (repeatable)', collect)
      .option('--remove <first..last>', 'remove a run of words (repeatable)', collect)
      .option('--transcript <file>', 'the JSON of `lipsync transcribe --out` (else it transcribes first)')
      .option('--voice <id>', 'voice of new words: a clone or an earlier preview id')
      .option('--model <id>', 'model of the render', 'lipsync-2')
      .requiredOption('--out <file>', 'where to write the rendered video')
      .option('--preview-out <file>', 'also save the preview audio (WAV)'),
  ).action(async (video: string, opts: DialogueOpts) => {
    const r = await dialogue(video, opts);
    print(
      !!opts.json,
      r,
      `${r.output}\ndialogue edit ${r.dialogueEditId} (${r.status}), render ${r.generationId}`,
    );
  });
}

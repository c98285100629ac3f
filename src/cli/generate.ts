// `lipsync generate`: a generation from the command line through a running server's HTTP API, as
// any client would make it: local files are uploaded as assets (URLs are passed on; text becomes a
// text input the server synthesizes), the generation is created with an idempotency key, its progress
// is shown as a bar on stderr, and the output is downloaded. Needs a server (`lipsync serve`) and an
// API key; nothing here touches the database.
import { randomUUID } from 'node:crypto';
import { apiError, client, ClientError, download, sleep, uploadFile, type Api } from './http.js';

export interface GenerateArgs {
  server: string;
  key: string;
  model: string;
  video?: string;
  image?: string;
  /** Exactly one of audio and text. */
  audio?: string;
  /** The words spoken in `audio`, aligned by the server to shape the mouth per sound. */
  transcript?: string;
  /** Speech synthesized by the server at admission (a text input). */
  text?: { script: string; voiceId: string; provider?: string };
  options: Record<string, unknown>;
  out?: string;
  /** Seconds between progress polls. */
  pollSeconds: number;
}

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/** An input entry for the generation: a URL as is, a local file uploaded as an asset first. */
export async function input(api: Api, type: 'video' | 'image' | 'audio', source: string) {
  if (isUrl(source)) return { type, url: source };
  return { type, assetId: await uploadFile(api, source) };
}

/** The text input of POST /v2/generate: the server synthesizes it when it admits the generation. */
function textInput(t: NonNullable<GenerateArgs['text']>) {
  return {
    type: 'text',
    provider: { ...(t.provider ? { name: t.provider } : {}), voiceId: t.voiceId, script: t.script },
  };
}

/** A progress bar on stderr: redrawn in place on a terminal, a line per 10 % otherwise. */
export class ProgressBar {
  private lastLine = -1;
  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly width = 30,
  ) {}

  update(status: string, percent: number | null): void {
    const p = Math.max(0, Math.min(100, percent ?? 0));
    const filled = Math.round((p / 100) * this.width);
    const text = `[${'#'.repeat(filled)}${'-'.repeat(this.width - filled)}] ${p.toFixed(0).padStart(3)}% ${status}`;
    if (this.stream.isTTY) {
      this.stream.write(`\r${text}\x1b[K`);
    } else {
      const step = Math.floor(p / 10);
      if (step !== this.lastLine) {
        this.lastLine = step;
        this.stream.write(`${text}\n`);
      }
    }
  }

  done(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }
}

const TERMINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'CANCELED', 'TIMED_OUT']);

export async function generate(
  args: GenerateArgs,
  bar: ProgressBar | null,
): Promise<Record<string, unknown>> {
  const api = client(args.server, args.key);
  const visual = args.image
    ? await input(api, 'image', args.image)
    : await input(api, 'video', args.video as string);
  const audio = args.text
    ? textInput(args.text)
    : {
        ...(await input(api, 'audio', args.audio as string)),
        ...(args.transcript ? { transcript: args.transcript } : {}),
      };
  const created = await api(
    'POST',
    '/v2/generate',
    {
      model: args.model,
      input: [visual, audio],
      ...(Object.keys(args.options).length ? { options: args.options } : {}),
    },
    // A network or proxy retry of this request cannot create a second generation.
    { 'idempotency-key': randomUUID() },
  );
  if (created.status !== 201 && created.status !== 200) throw apiError('creating the generation', created);
  const { g, quality } = await followGeneration(api, created.json, args.pollSeconds, bar);
  const out = await downloadOutput(api, g.id as string, args.out);
  // A preview's still goes beside its clip: <clip name>.jpg.
  const stillUrl = (g.preview as { stillUrl?: string | null } | undefined)?.stillUrl;
  const still = stillUrl ? out.replace(/\.[^./]+$/, '') + '.jpg' : null;
  if (stillUrl && still) await download(stillUrl, still, 'the still');
  return {
    id: g.id,
    status: g.status,
    output: out,
    outputDuration: g.outputDuration ?? null,
    ...(still ? { still } : {}),
    quality,
  };
}

/**
 * Polls a just-created generation until a terminal state, its progress on `bar`; then its quality
 * report. Anything but COMPLETED is a ClientError naming the state and the error code.
 */
export async function followGeneration(
  api: Api,
  created: Record<string, any>,
  pollSeconds: number,
  bar: ProgressBar | null,
): Promise<{ g: Record<string, any>; quality: unknown }> {
  const id = created.id as string;
  let g = created;
  while (!TERMINAL.has(g.status)) {
    bar?.update(`${g.status.toLowerCase()} ${id}`, g.progress_percent ?? null);
    await sleep(pollSeconds * 1000);
    const r = await api('GET', `/v2/generate/${id}?include=progress`);
    if (r.status !== 200) throw apiError('reading the generation', r);
    g = r.json;
  }
  if (g.status === 'COMPLETED') bar?.update(`completed ${id}`, 100);
  bar?.done();

  const q = await api('GET', `/v2/generate/${id}?include=quality`);
  const quality = q.status === 200 ? (q.json.quality ?? null) : null;
  if (g.status !== 'COMPLETED') {
    throw new ClientError(
      `generation ${id} ended ${g.status}: ${g.errorCode ?? ''} ${g.error ?? ''}`.trim(),
      {
        id,
        status: g.status,
        errorCode: g.errorCode ?? null,
        error: g.error ?? null,
        quality,
      },
    );
  }
  return { g, quality };
}

/** Downloads a completed generation's output to `out` (default `<id>.mp4` or `.mov`); the path. */
export async function downloadOutput(api: Api, id: string, out?: string): Promise<string> {
  const d = await api('GET', `/v2/generations/${id}/download`);
  if (d.status !== 200) throw apiError('getting the download URL', d);
  const url = d.text.trim();
  const file = out ?? `${id}.${url.includes('.mov') ? 'mov' : 'mp4'}`;
  await download(url, file, 'the output');
  return file;
}

/** A short human summary of the engine's report. */
export function qualityText(quality: Record<string, any> | null): string {
  if (!quality) return 'no quality report';
  const parts = [
    `engine ${quality.engine}`,
    `face in ${quality.framesWithFace}/${quality.framesTotal} frames`,
  ];
  if (quality.mouthAudioCorrelation !== undefined && quality.mouthAudioCorrelation !== null)
    parts.push(`mouth/audio correlation ${quality.mouthAudioCorrelation}`);
  const art = quality.articulation as
    { primary: string; sourceMs: Record<string, number>; notes?: string[] } | undefined;
  if (art) {
    const total = Object.values(art.sourceMs).reduce((a, b) => a + b, 0) || 1;
    const shares = Object.entries(art.sourceMs)
      .map(([k, v]) => `${k} ${Math.round((100 * v) / total)}%`)
      .join(', ');
    parts.push(`mouth shapes from ${shares || art.primary}`);
  }
  if (quality.activeSpeaker)
    parts.push(
      `active speaker: ${quality.activeSpeaker.method}, ${quality.activeSpeaker.faces} face(s), ${quality.activeSpeaker.switches} change(s)`,
    );
  const warnings = [...((quality.warnings as string[] | undefined) ?? []), ...(art?.notes ?? [])];
  return [parts.join(', '), ...warnings.map((w) => `warning: ${w}`)].join('\n');
}

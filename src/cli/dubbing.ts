// `lipsync languages`, `lipsync dub` and `lipsync redub`: dubbing through a running server's API, as any
// client would make it. `dub` uploads a local video (a URL is passed on), creates the generation with
// dubParams, shows its progress, downloads the dubbed video and, if asked, its target-language
// subtitles. `redub` corrects some segments of a finished dub (dubParams.basedOn): only those (and
// the segments of a speaker given another voice, --voice SPEAKER=ID) are spoken again.
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { Option, type Command } from 'commander';
import { apiError, apiFrom, ClientError, connectionOptions, usageError, type Api } from './http.js';
import { downloadOutput, followGeneration, input, ProgressBar } from './generate.js';
import { table } from './table.js';

type Print = (json: boolean, obj: Record<string, unknown>, text: string) => void;

interface ApiOpts {
  server?: string;
  key?: string;
  json?: boolean;
}

const PROVIDERS = ['local', 'openai', 'deepl'];

const providerOption = (what: string) => new Option('--provider <name>', what).choices(PROVIDERS);

const codes = (langs: { code: string }[]) => langs.map((l) => l.code).join(',') || '-';

/** The languages catalogue as text: one row per provider, then the routes of those that list them. */
export function languagesText(providers: Record<string, any>[]): string {
  const parts = [
    table([
      ['PROVIDER', 'AVAILABLE', 'SOURCES', 'TARGETS'],
      ...providers.map((p) => [p.provider, p.available ? 'yes' : 'no', codes(p.sources), codes(p.targets)]),
    ]),
  ];
  for (const p of providers) {
    if (!p.pairs?.length) continue;
    const routes = (p.pairs as Record<string, any>[]).map((r) => [
      `${r.from} -> ${r.to}`,
      r.via ? `${r.quality} via ${r.via}` : r.quality,
      r.note ?? '',
    ]);
    parts.push(`${p.provider} routes:\n${table([['ROUTE', 'QUALITY', 'NOTE'], ...routes])}`);
  }
  return parts.join('\n\n');
}

/** `<video-basename>.<lang>.mp4` in the current folder (a URL's last path segment as the name). */
function defaultOut(video: string, lang: string): string {
  let name = video;
  if (/^https?:\/\//i.test(video)) {
    try {
      name = decodeURIComponent(new URL(video).pathname);
    } catch {
      name = '';
    }
  }
  const base = basename(name, extname(name)) || 'dub';
  return `${base}.${lang.toLowerCase()}.mp4`;
}

function subtitlesFormat(file: string): 'srt' | 'vtt' {
  const ext = extname(file).toLowerCase();
  if (ext === '.srt' || ext === '.vtt') return ext.slice(1) as 'srt' | 'vtt';
  throw usageError(`--subtitles must name a .srt or .vtt file (got ${JSON.stringify(file)})`);
}

interface DubOpts extends ApiOpts {
  to?: string;
  from?: string;
  provider?: string;
  voice: string[];
  model: string;
  out?: string;
  subtitles?: string;
  wait: boolean;
  poll: number;
}

async function writeSubtitles(api: Api, id: string, file: string): Promise<void> {
  const r = await api('GET', `/v2/generations/${id}/subtitles?format=${subtitlesFormat(file)}&lang=target`);
  if (r.status !== 200) throw apiError(`getting the subtitles of generation ${id}`, r);
  try {
    await writeFile(file, r.text);
  } catch (err) {
    throw new ClientError(`writing ${file}: ${(err as Error).message}`);
  }
}

/** One line about a completed dub, from its transcript. */
function dubLine(t: Record<string, any>): string {
  const route = t.route?.via ? `, via ${t.route.via} (${t.route.quality})` : '';
  return `dubbed ${t.sourceLang} -> ${t.targetLang} (${t.provider}${route}): ${t.segments.length} segment(s), ${t.voices.length} voice(s)`;
}

/** `ID=TEXT` of --segment, `ID=START-END` (seconds) of --span: the corrections of a re-dub, by segment. */
export function redubSegments(texts: string[], spans: string[]): Record<string, unknown>[] {
  const byId = new Map<string, Record<string, unknown>>();
  const entry = (id: string) => byId.get(id) ?? byId.set(id, { id }).get(id)!;
  for (const t of texts) {
    const at = t.indexOf('=');
    if (at < 1)
      throw usageError(`--segment takes ID=TEXT, e.g. s2="Buenos días." (got ${JSON.stringify(t)})`);
    entry(t.slice(0, at).trim()).translatedText = t.slice(at + 1);
  }
  for (const sp of spans) {
    const m = /^([^=]+)=(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(sp.trim());
    if (!m || !(Number(m[3]) > Number(m[2])))
      throw usageError(`--span takes ID=START-END in seconds, e.g. s2=1.5-3.2 (got ${JSON.stringify(sp)})`);
    Object.assign(entry(m[1]!.trim()), {
      startMs: Math.round(Number(m[2]) * 1000),
      endMs: Math.round(Number(m[3]) * 1000),
    });
  }
  if (byId.size === 0)
    throw usageError('redub needs at least one --segment ID=TEXT, --span ID=START-END or --voice SPEAKER=ID');
  return [...byId.values()];
}

const collect = (v: string, all: string[]) => [...all, v];

/**
 * --voice values: `ID` (one voice for every speaker, a dub only) or `SPEAKER=ID` (repeatable) as
 * dubParams.voiceId / dubParams.voices.
 */
export function dubVoices(values: string[], perSpeakerOnly: boolean): Record<string, unknown> {
  const voices: Record<string, string> = {};
  const plain: string[] = [];
  for (const v of values) {
    const at = v.indexOf('=');
    if (at === 0 || at === v.length - 1 || (at < 0 && perSpeakerOnly))
      throw usageError(
        `--voice takes SPEAKER=VOICE_ID, e.g. speaker_1=espeak-es1 (got ${JSON.stringify(v)})`,
      );
    if (at < 0) plain.push(v.trim());
    else voices[v.slice(0, at).trim()] = v.slice(at + 1).trim();
  }
  if (plain.length > 1 || (plain.length && Object.keys(voices).length))
    throw usageError('--voice: give one VOICE_ID for every speaker, or SPEAKER=VOICE_ID per speaker');
  if (plain.length) return { voiceId: plain[0] };
  return Object.keys(voices).length ? { voices } : {};
}

/** Follows a created dub, downloads its video (and subtitles) and prints the summary line. */
async function finishDub(
  api: Api,
  created: Record<string, any>,
  opts: DubOpts,
  out: string,
  print: Print,
): Promise<void> {
  const json = !!opts.json;
  const id = created.id as string;
  if (!opts.wait) {
    print(json, { id, status: created.status }, id);
    return;
  }
  const { g } = await followGeneration(api, created, opts.poll, json ? null : new ProgressBar());
  const output = await downloadOutput(api, id, out);
  if (opts.subtitles !== undefined) await writeSubtitles(api, id, opts.subtitles);
  const t = await api('GET', `/v2/generations/${id}/transcript`);
  if (t.status !== 200) throw apiError(`getting the transcript of generation ${id}`, t);
  const { generationId: _, ...dub } = t.json as Record<string, any>;
  print(
    json,
    {
      id,
      status: g.status,
      output,
      subtitles: opts.subtitles ?? null,
      outputDuration: g.outputDuration ?? null,
      dub,
    },
    [output, ...(opts.subtitles ? [opts.subtitles] : []), dubLine(dub)].join('\n'),
  );
}

/** The checks `dub` and `redub` share, before anything is sent. */
function checkFollowOptions(opts: DubOpts): void {
  if (opts.subtitles !== undefined) subtitlesFormat(opts.subtitles);
  if (!opts.wait && (opts.out !== undefined || opts.subtitles !== undefined))
    throw usageError('--out and --subtitles need the dub to finish: drop --no-wait');
  if (!(opts.poll > 0)) throw usageError('--poll must be a positive number of seconds');
}

export function registerDubbingCommands(program: Command, print: Print): void {
  connectionOptions(
    program
      .command('languages')
      .description('the languages dubbing offers on the server, per translation provider, with route quality')
      .addOption(providerOption('only this translation provider')),
  )
    .option('--json', 'print the API answer as one JSON object')
    .action(async (opts: ApiOpts & { provider?: string }) => {
      const r = await apiFrom(opts)('GET', '/v2/dubbing/languages');
      if (r.status !== 200) throw apiError('listing the dubbing languages', r);
      const providers = (r.json.providers as Record<string, any>[]).filter(
        (p) => !opts.provider || p.provider === opts.provider,
      );
      print(!!opts.json, { providers }, languagesText(providers));
    });

  connectionOptions(
    program
      .command('dub')
      .description(
        'dub a video into another language through a running server: its speech is recognized, translated, spoken by a target-language voice and lip-synced; downloads the output',
      )
      .argument('<video>', 'a local video file (uploaded) or an http(s) URL')
      .option('--to <lang>', 'the target language, e.g. es (see `lipsync languages`)')
      .option('--from <lang>', 'the language spoken in the video (default: auto)')
      .addOption(providerOption('the translation provider (default: local)'))
      .option(
        '--voice <id|speaker=id>',
        'one voice for every speaker, or SPEAKER=ID for one speaker (repeatable): ids of `lipsync voices` (a local one must speak the target language; default: a local voice matched to each speaker)',
        collect,
        [],
      )
      .option('--model <id>', 'model id', 'lipsync-2')
      .option('--out <file>', 'where to write the dubbed video (default <video name>.<lang>.mp4)')
      .option('--subtitles <file>', 'also write the target-language subtitles (.srt or .vtt)')
      .option('--no-wait', 'print the generation id once it is created and exit')
      .option('--poll <seconds>', 'seconds between progress checks', (v) => Number(v), 1),
  )
    .option('--json', 'print one JSON object (no progress bar)')
    .action(async (video: string, opts: DubOpts) => {
      if (!opts.to?.trim())
        throw usageError('dub needs --to LANG, the target language (see `lipsync languages`)');
      checkFollowOptions(opts);
      const voices = dubVoices(opts.voice, false);
      // Before anything is uploaded: a missing key is bad usage (exit 2).
      const api = apiFrom(opts);
      const created = await api(
        'POST',
        '/v2/generate',
        {
          model: opts.model,
          input: [await input(api, 'video', video)],
          dubParams: {
            targetLang: opts.to.trim(),
            ...(opts.from ? { sourceLang: opts.from } : {}),
            ...(opts.provider ? { provider: opts.provider } : {}),
            ...voices,
          },
        },
        // A network or proxy retry of this request cannot create a second generation.
        { 'idempotency-key': randomUUID() },
      );
      if (created.status !== 201 && created.status !== 200) throw apiError('creating the dub', created);
      await finishDub(api, created.json, opts, opts.out ?? defaultOut(video, opts.to.trim()), print);
    });

  connectionOptions(
    program
      .command('redub')
      .description(
        'correct some segments of a finished dub (see GET /v2/generations/ID/transcript): a new generation where only those are spoken again; downloads the output',
      )
      .argument('<generation-id>', 'the finished dub to correct')
      .option(
        '--segment <id=text>',
        'a segment\'s new translation, e.g. s2="Buenos días." (repeatable)',
        collect,
        [],
      )
      .option(
        '--span <id=start-end>',
        "a segment's new source span in seconds, e.g. s2=1.5-3.2 (repeatable)",
        collect,
        [],
      )
      .option(
        '--voice <speaker=id>',
        "another voice for a speaker, e.g. speaker_1=espeak-es1: all that speaker's segments are spoken again (repeatable)",
        collect,
        [],
      )
      .option('--model <id>', 'model id', 'lipsync-2')
      .option('--out <file>', 'where to write the dubbed video (default <generation id>.redub.mp4)')
      .option('--subtitles <file>', 'also write the target-language subtitles (.srt or .vtt)')
      .option('--no-wait', 'print the generation id once it is created and exit')
      .option('--poll <seconds>', 'seconds between progress checks', (v) => Number(v), 1),
  )
    .option('--json', 'print one JSON object (no progress bar)')
    .action(async (basedOn: string, opts: DubOpts & { segment: string[]; span: string[] }) => {
      const voices = dubVoices(opts.voice, true);
      const segments =
        voices.voices && !opts.segment.length && !opts.span.length
          ? []
          : redubSegments(opts.segment, opts.span);
      checkFollowOptions(opts);
      const api = apiFrom(opts);
      const created = await api(
        'POST',
        '/v2/generate',
        { model: opts.model, dubParams: { basedOn, ...(segments.length ? { segments } : {}), ...voices } },
        { 'idempotency-key': randomUUID() },
      );
      if (created.status !== 201 && created.status !== 200) throw apiError('creating the re-dub', created);
      await finishDub(api, created.json, opts, opts.out ?? `${basedOn}.redub.mp4`, print);
    });
}

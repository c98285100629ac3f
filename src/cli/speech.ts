// Speech from the command line. API commands talk to a running server with an API key, as any
// client would (`tts`, `voices`, `voice clone`, `voice delete`); operator commands open the database
// like `lipsync org ...` (`voice verify/block/unblock`, `org provider-key`). Signed URLs and provider
// keys are never printed: they grant access.
import { randomUUID } from 'node:crypto';
import { Argument, Command, Option } from 'commander';
import { table } from './table.js';
import type { Config } from '../config.js';
import type { Services } from '../services/index.js';
import type { ProviderName } from '../speech/types.js';
import {
  apiError,
  apiFrom,
  ClientError,
  download,
  retryAfterSeconds,
  connectionOptions,
  sleep,
  StatusLine,
  uploadFile,
  usageError,
} from './http.js';

export interface CliDeps {
  print(json: boolean, obj: Record<string, unknown>, text: string): void;
  withServices<T>(fn: (s: Services, config: Config) => Promise<T>): Promise<T>;
}

const PROVIDERS = ['local', 'openai', 'elevenlabs'];

interface ApiOpts {
  server?: string;
  key?: string;
  json?: boolean;
}

function apiOptions(cmd: Command): Command {
  return connectionOptions(cmd).option('--json', 'print one JSON object');
}

const providerOption = () =>
  new Option('--provider <name>', 'voice provider (default: the server default)').choices(PROVIDERS);

/** A 0..1 (or other range) setting; out of range is bad usage (exit 2), not an API round trip. */
function setting(name: string, v: number | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (!(Number.isFinite(v) && v >= min && v <= max))
    throw usageError(`--${name} must be a number from ${min} to ${max}`);
  return v;
}

interface TtsOpts extends ApiOpts {
  voice: string;
  provider?: string;
  stability?: number;
  similarity?: number;
  speed?: number;
  out?: string;
  async?: boolean;
}

async function tts(text: string, opts: TtsOpts): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = { script: text, voiceId: opts.voice };
  if (opts.provider) body.provider = opts.provider;
  const stability = setting('stability', opts.stability, 0, 1);
  const similarity = setting('similarity', opts.similarity, 0, 1);
  const speed = setting('speed', opts.speed, 0.5, 2);
  if (stability !== undefined) body.stability = stability;
  if (similarity !== undefined) body.similarityBoost = similarity;
  if (speed !== undefined) body.speed = speed;
  const api = apiFrom(opts);

  let speech: { id: string; url: string; duration: number; assetId: string };
  let jobId: string | null = null;
  if (!opts.async) {
    const r = await api('POST', '/v2/tts', body);
    if (r.status !== 200) throw apiError('synthesizing', r);
    speech = r.json;
  } else {
    // A network or proxy retry of this request cannot start a second job.
    const created = await api('POST', '/v2/tts/jobs', body, { 'idempotency-key': randomUUID() });
    if (created.status !== 202 && created.status !== 200) throw apiError('creating the tts job', created);
    let job = created.json;
    let retryAfter = created.headers.get('retry-after');
    jobId = job.id as string;
    const line = opts.json ? null : new StatusLine();
    const started = Date.now();
    while (job.status === 'PENDING' || job.status === 'PROCESSING') {
      line?.update(
        `tts job ${jobId}: ${String(job.status).toLowerCase()} (${Math.round((Date.now() - started) / 1000)} s)`,
      );
      await sleep(retryAfterSeconds(retryAfter, 1) * 1000);
      const r = await api('GET', `/v2/tts/jobs/${jobId}`);
      if (r.status !== 200) throw apiError('reading the tts job', r);
      job = r.json;
      retryAfter = r.headers.get('retry-after');
    }
    line?.update(`tts job ${jobId}: ${String(job.status).toLowerCase()}`);
    line?.done();
    if (job.status !== 'SUCCESS')
      throw new ClientError(
        `tts job ${jobId} ended ${job.status}: ${job.error?.code ?? ''}: ${job.error?.message ?? ''}`,
        { id: jobId, status: job.status, errorCode: job.error?.code ?? null },
      );
    speech = { id: job.assetId, url: job.url, duration: job.duration, assetId: job.assetId };
  }
  const out = opts.out ?? `${speech.id}.wav`;
  await download(speech.url, out, 'the speech');
  return {
    id: speech.id,
    assetId: speech.assetId,
    ...(jobId ? { jobId } : {}),
    duration: speech.duration,
    output: out,
  };
}

function voiceRow(v: Record<string, any>): string[] {
  return [v.id, v.provider, v.type, v.name, v.restriction?.code ?? '-'];
}

export function registerSpeechCommands(program: Command, org: Command, deps: CliDeps): void {
  const { print, withServices } = deps;

  apiOptions(
    program
      .command('tts')
      .description('synthesize speech through a running server and download it as a WAV file')
      .argument('<text>', 'what to say (1 to 5,000 characters)')
      .requiredOption('--voice <id>', 'voice id (see `lipsync voices`), built-in or a clone')
      .addOption(providerOption())
      .option('--stability <n>', '0..1, 0 livelier, 1 flatter', Number)
      .option('--similarity <n>', "0..1, how far a clone's voice is matched", Number)
      .option('--speed <n>', '0.5..2', Number)
      .option('--out <file>', 'where to write the WAV (default <id>.wav)')
      .option('--async', 'as an asynchronous job (POST /v2/tts/jobs; needs the tts_async flag)'),
  ).action(async (text: string, opts: TtsOpts) => {
    const r = await tts(text, opts);
    print(!!opts.json, r, `${r.output}\nspeech ${r.id}: ${r.duration} s, voice ${opts.voice}`);
  });

  apiOptions(
    program
      .command('voices')
      .description("list the voices the organization can use (providers' built-in voices and its clones)")
      .addOption(providerOption()),
  ).action(async (opts: ApiOpts & { provider?: string }) => {
    const q = opts.provider ? `?provider=${encodeURIComponent(opts.provider)}` : '';
    const r = await apiFrom(opts)('GET', `/v2/voices${q}`);
    if (r.status !== 200) throw apiError('listing voices', r);
    const voices = r.json as Record<string, any>[];
    print(
      !!opts.json,
      { voices },
      voices.length
        ? table([['ID', 'PROVIDER', 'TYPE', 'NAME', 'RESTRICTION'], ...voices.map(voiceRow)])
        : '(no voices)',
    );
  });

  const voice = program
    .command('voice')
    .description('clone and delete voices (API); verify and block them (operator)');
  apiOptions(
    voice
      .command('clone')
      .description('clone a voice from a recording of at least 3 s of speech (uploaded first)')
      .requiredOption('--name <name>', 'the voice name, unique in the organization')
      .requiredOption('--sample <file>', 'audio or video file with the speaker alone')
      .addOption(providerOption()),
  ).action(async (opts: ApiOpts & { name: string; sample: string; provider?: string }) => {
    const api = apiFrom(opts);
    const assetId = await uploadFile(api, opts.sample);
    const r = await api('POST', '/v2/voices', {
      name: opts.name,
      assetId,
      ...(opts.provider ? { provider: opts.provider } : {}),
    });
    if (r.status !== 201) throw apiError('cloning the voice', r);
    const v = r.json as Record<string, any>;
    const notes = [`name ${v.name}`, `provider ${v.provider}`];
    if (v.baseVoice) notes.push(`base voice ${v.baseVoice}`);
    if (v.restriction) notes.push(`restricted: ${v.restriction.code}`);
    print(!!opts.json, v, `${v.id}\n(${notes.join(', ')})`);
  });
  apiOptions(voice.command('delete').description('delete a cloned voice').argument('<id>')).action(
    async (id: string, opts: ApiOpts) => {
      const r = await apiFrom(opts)('DELETE', `/v2/voices/${encodeURIComponent(id)}`);
      if (r.status !== 200) throw apiError(`deleting voice ${id}`, r);
      print(!!opts.json, { id, deleted: true }, `deleted voice ${id}`);
    },
  );

  voice
    .command('verify')
    .description("operator: record that a clone's speaker consented (database)")
    .argument('<id>')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withServices(async (s) => {
        if (!(await s.voices.verify(id))) throw new ClientError(`no cloned voice ${id}`);
        print(!!opts.json, { id, verified: true }, `verified voice ${id}`);
      });
    });
  voice
    .command('block')
    .description('operator: refuse a voice (built-in or clone) to everyone: voice_blocked (database)')
    .argument('<id>')
    .option('--reason <reason>', 'kept with the block')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { reason?: string; json?: boolean }) => {
      await withServices(async (s) => {
        await s.voices.block(id, opts.reason ?? null);
        print(!!opts.json, { id, blocked: true, reason: opts.reason ?? null }, `blocked voice ${id}`);
      });
    });
  voice
    .command('unblock')
    .description('operator: lift a block (database)')
    .argument('<id>')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withServices(async (s) => {
        // Exit 1 rather than a silent success: a mistyped id would otherwise look like an unblock.
        if (!(await s.voices.unblock(id))) throw new ClientError(`voice ${id} is not blocked`);
        print(!!opts.json, { id, blocked: false }, `unblocked voice ${id}`);
      });
    });

  org
    .command('provider-key')
    .description(
      "connect (or remove) an organization's own voice-provider account; the key is checked with the provider, stored, and never printed",
    )
    .argument('<org-id>')
    .addArgument(new Argument('<provider>').choices(PROVIDERS))
    .option('--key <key>', 'the provider API key (visible in the process list: prefer --key-from-env)')
    .option('--key-from-env <var>', 'read the key from this environment variable')
    .option('--remove', 'disconnect: the server-wide key applies again')
    .option('--json', 'print one JSON object')
    .action(
      async (
        orgId: string,
        provider: string,
        opts: { key?: string; keyFromEnv?: string; remove?: boolean; json?: boolean },
      ) => {
        const given = [opts.key !== undefined, opts.keyFromEnv !== undefined, !!opts.remove];
        if (given.filter(Boolean).length !== 1)
          throw usageError('give exactly one of --key, --key-from-env and --remove');
        let key: string | null = null;
        if (opts.keyFromEnv !== undefined) {
          key = process.env[opts.keyFromEnv] ?? '';
          if (key === '') throw usageError(`the environment variable ${opts.keyFromEnv} is not set`);
        } else if (opts.key !== undefined) key = opts.key;
        await withServices(async (s) => {
          const o = await s.organizations.get(orgId);
          const c = await s.speech.connect(o, provider as ProviderName, key);
          print(
            !!opts.json,
            { organizationId: o.id, ...c },
            c.connected
              ? `${o.id} uses its own ${provider} account (key checked with the provider)`
              : `${o.id} no longer has its own ${provider} account`,
          );
        });
      },
    );
}

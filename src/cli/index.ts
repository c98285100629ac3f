// The `lipsync` command. Operator commands (serve, worker, migrate, org, key, …) open the configured
// database; client commands (generate, generation get, tts, …) talk to a running server. --json
// prints exactly one JSON object on stdout (human-readable text otherwise).
import { existsSync } from 'node:fs';
import { relative } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { loadConfig, ConfigError, type Config } from '../config.js';
import { createLogger } from '../logger.js';
import { createServices } from '../app/container.js';
import type { Services } from '../services/index.js';
import { AppError } from '../domain/errors.js';
import { start, stopOnSignals } from '../main.js';
import { generate, ProgressBar, qualityText } from './generate.js';
import { ClientError, connection, connectionOptions, usageError } from './http.js';
import { sqliteFile } from '../store/database.js';
import { registerGenerationCommands } from './generations.js';
import { registerLoginCommands } from './login.js';
import { registerSpeechCommands } from './speech.js';
import { registerDialogueCommands } from './dialogue.js';
import { registerOperatorCommands } from './operator.js';
import { registerModelCommands } from './models.js';
import { registerBatchCommands } from './batch.js';
import { registerDubbingCommands } from './dubbing.js';
import { registerNoteCommands } from './notes.js';
import { registerWorkerTokenCommands } from './worker-tokens.js';
import { startRemoteWorker } from '../app/remote-worker.js';
import { remoteJobHandlers } from '../handlers/index.js';

class CliExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

function print(json: boolean, obj: Record<string, unknown>, text: string): void {
  process.stdout.write(json ? JSON.stringify(obj) + '\n' : text + '\n');
}

function fail(json: boolean, message: string, code = 1): never {
  if (json) process.stdout.write(JSON.stringify({ error: message }) + '\n');
  process.stderr.write(`lipsync: ${message}\n`);
  throw new CliExit(code);
}

/**
 * Operator commands must not leave an empty database behind in whatever folder they were typed in:
 * without DATABASE_URL or an explicit LIPSYNC_DATA_DIR, the default ./data must already hold one,
 * unless --create asks for a new one.
 */
function requireDatabase(config: Config, create: boolean): void {
  if (create || config.databaseUrl || process.env.LIPSYNC_DATA_DIR) return;
  const file = sqliteFile(config.dataDir);
  if (existsSync(file)) return;
  throw usageError(
    `no database here (${relative(process.cwd(), file)} does not exist). Run operator commands where ` +
      'the server keeps its data, or set LIPSYNC_DATA_DIR or DATABASE_URL; --create starts a new ' +
      'database in this folder. Client commands need none: lipsync login --server URL --key KEY',
  );
}

type WithServices = <T>(fn: (s: Services, config: Config) => Promise<T>) => Promise<T>;

function servicesOf(create: () => boolean): WithServices {
  return async (fn) => {
    const config = loadConfig();
    requireDatabase(config, create());
    // Commands log only warnings so that --json output stays the one object on stdout.
    const services = await createServices(
      config,
      createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel).child({}, {}),
    );
    try {
      return await fn(services, config);
    } finally {
      await services.close();
    }
  };
}

/** `lipsync worker --server URL --token T`: a worker that holds no database or storage credentials. */
async function runRemoteWorker(config: Config, server: string, token: string | undefined): Promise<void> {
  if (!token)
    fail(false, 'a remote worker needs --token (or LIPSYNC_WORKER_TOKEN): lipsync worker-token create', 2);
  if (!/^https?:\/\/[^/]/.test(server)) fail(false, '--server must be an http(s) URL', 2);
  const logger = createLogger(config.logLevel);
  const worker = await startRemoteWorker(
    config,
    { server, token, handlers: remoteJobHandlers(config) },
    logger,
  );
  stopOnSignals(() => worker.stop(), { timeoutMs: config.shutdownTimeoutMs, logger, what: 'worker' });
}

export function buildProgram(): Command {
  const program = new Command('lipsync')
    .description('Self-hosted lip-sync generation service')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) })
    .option(
      '--create',
      'let a command that opens the database create a new one in ./data (else refused where none exists)',
    );
  const create = () => program.opts<{ create?: boolean }>().create === true;
  const withServices = servicesOf(create);

  program
    .command('serve')
    .description('run the API server (and the in-process worker unless LIPSYNC_ROLE=api)')
    .action(async () => {
      const config = loadConfig();
      requireDatabase(config, create());
      const running = await start(config);
      stopOnSignals(
        (signal) => running.stop({ drainMs: signal === 'SIGTERM' ? config.shutdownDrainMs : 0 }),
        { timeoutMs: config.shutdownTimeoutMs, logger: running.services.logger, what: 'server' },
      );
    });

  program
    .command('worker')
    .description(
      'run a worker process (claims and runs jobs) on the configured database, or remotely over HTTP (--server)',
    )
    .option('--kinds <list>', 'job kinds to serve, comma-separated (default: all; LIPSYNC_WORKER_KINDS)')
    .option('--concurrency <n>', 'jobs run at once (LIPSYNC_WORKER_CONCURRENCY)')
    .option(
      '--server <url>',
      'run as a remote worker of this server, over HTTP (no database; docs/workers.md)',
    )
    .option('--token <token>', 'the worker token of --server (LIPSYNC_WORKER_TOKEN)')
    .action(async (opts: { kinds?: string; concurrency?: string; server?: string; token?: string }) => {
      const config = loadConfig({
        ...process.env,
        LIPSYNC_ROLE: 'worker',
        ...(opts.kinds !== undefined ? { LIPSYNC_WORKER_KINDS: opts.kinds } : {}),
        ...(opts.concurrency !== undefined ? { LIPSYNC_WORKER_CONCURRENCY: opts.concurrency } : {}),
      });
      if (opts.server !== undefined) {
        await runRemoteWorker(config, opts.server, opts.token ?? process.env.LIPSYNC_WORKER_TOKEN);
        return;
      }
      requireDatabase(config, create());
      const running = await start(config);
      stopOnSignals(() => running.stop(), {
        timeoutMs: config.shutdownTimeoutMs,
        logger: running.services.logger,
        what: 'worker',
      });
    });

  connectionOptions(program.command('generate'))
    .description(
      'lip-sync a video (or image) to an audio file or to text through a running server: uploads local files, shows progress, downloads the output',
    )
    .option('--video <file|url>', 'the video whose mouth is re-animated')
    .option('--image <file|url>', 'a still portrait instead of a video (model sync-3)')
    .option('--audio <file|url>', 'the new speech')
    .option('--transcript <words>', 'the words spoken in --audio: the mouth is shaped per sound from them')
    .option('--text <script>', 'the new speech as text, synthesized by the server (instead of --audio)')
    .option('--voice <id>', 'voice of --text (see `lipsync voices`)')
    .option('--provider <name>', 'voice provider of --text (default: the server default)')
    .option('--model <id>', 'model id', 'lipsync-2')
    .addOption(
      new Option('--sync-mode <mode>', 'when audio and video lengths differ').choices([
        'cut_off',
        'loop',
        'bounce',
        'silence',
        'remap',
      ]),
    )
    .option('--active-speaker', 'animate the face that speaks in the video (audio-visual detection)')
    .option('--temperature <t>', 'expressiveness 0..1', (v) => Number(v))
    .option(
      '--preview-at <seconds>',
      'render only one second of the output from this moment, with a JPEG still of it (written beside --out)',
      (v) => Number(v),
    )
    .option('--options <json>', 'more generation options as a JSON object (merged last)')
    .option('--out <file>', 'where to write the output (default <id>.mp4)')
    .option('--poll <seconds>', 'seconds between progress checks', (v) => Number(v), 1)
    .option('--json', 'print one JSON object (no progress bar)')
    .action(
      async (opts: {
        video?: string;
        image?: string;
        audio?: string;
        transcript?: string;
        text?: string;
        voice?: string;
        provider?: string;
        model: string;
        syncMode?: string;
        activeSpeaker?: boolean;
        temperature?: number;
        previewAt?: number;
        options?: string;
        out?: string;
        server?: string;
        key?: string;
        poll: number;
        json?: boolean;
      }) => {
        const json = !!opts.json;
        if (!opts.video === !opts.image) fail(json, 'give exactly one of --video and --image', 2);
        if ((opts.audio === undefined) === (opts.text === undefined))
          fail(json, 'give exactly one of --audio and --text', 2);
        if (opts.text !== undefined && !opts.voice) fail(json, '--text needs --voice', 2);
        if (opts.transcript !== undefined && opts.audio === undefined)
          fail(json, '--transcript goes with --audio', 2);
        if (opts.text === undefined && (opts.voice || opts.provider))
          fail(json, '--voice and --provider go with --text', 2);
        if (!(opts.poll > 0)) fail(json, '--poll must be a positive number of seconds', 2);
        const options: Record<string, unknown> = {};
        if (opts.syncMode) options.sync_mode = opts.syncMode;
        if (opts.activeSpeaker) options.active_speaker = true;
        if (opts.temperature !== undefined) {
          if (!(opts.temperature >= 0 && opts.temperature <= 1))
            fail(json, '--temperature must be from 0 to 1', 2);
          options.temperature = opts.temperature;
        }
        if (opts.previewAt !== undefined) {
          if (!(opts.previewAt >= 0)) fail(json, '--preview-at must be a number of seconds >= 0', 2);
          options.preview = { atMs: Math.round(opts.previewAt * 1000) };
        }
        if (opts.options) {
          let extra: unknown;
          try {
            extra = JSON.parse(opts.options);
          } catch {
            extra = null;
          }
          if (!extra || typeof extra !== 'object' || Array.isArray(extra))
            fail(json, '--options must be a JSON object', 2);
          Object.assign(options, extra);
        }
        // Before the try: a missing key is bad usage (exit 2), not a failed generation.
        const target = connection(opts);
        try {
          const result = await generate(
            {
              ...target,
              model: opts.model,
              video: opts.video,
              image: opts.image,
              audio: opts.audio,
              transcript: opts.transcript,
              text:
                opts.text !== undefined
                  ? { script: opts.text, voiceId: opts.voice as string, provider: opts.provider }
                  : undefined,
              options,
              out: opts.out,
              pollSeconds: opts.poll,
            },
            json ? null : new ProgressBar(),
          );
          print(
            json,
            result,
            `${result.output}\n${result.still ? `${result.still}\n` : ''}${qualityText(result.quality as Record<string, unknown> | null)}`,
          );
        } catch (err) {
          if (!(err instanceof ClientError)) throw err;
          if (json) process.stdout.write(JSON.stringify({ error: err.message, ...err.details }) + '\n');
          process.stderr.write(`lipsync: ${err.message}\n`);
          const quality = err.details.quality as Record<string, unknown> | null | undefined;
          if (!json && quality) process.stderr.write(qualityText(quality) + '\n');
          throw new CliExit(1);
        }
      },
    );

  const generation = program
    .command('generation')
    .description('read, wait for, download (through a server) or cancel (operator) generations');
  registerGenerationCommands(generation, print);
  generation
    .command('cancel')
    .description('cancel a pending or processing generation')
    .argument('<id>')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withServices(async (s) => {
        const g = await s.generations.cancel(id);
        print(
          !!opts.json,
          { id: g.id, status: g.status, cancelRequested: true },
          `cancel requested for ${g.id} (status ${g.status})`,
        );
      });
    });

  const idem = program
    .command('idempotency')
    .description('switch keyed (Idempotency-Key) admission off and on');
  for (const [name, value] of [
    ['disable', '1'],
    ['enable', '0'],
  ] as const) {
    idem
      .command(name)
      .option('--json', 'print one JSON object')
      .action(async (opts: { json?: boolean }) => {
        await withServices(async (s) => {
          await s.store.settings.set('idempotency_disabled', value, new Date().toISOString());
          print(
            !!opts.json,
            { keyedAdmission: value === '0' },
            value === '1'
              ? 'keyed admission disabled (503 IDEMPOTENCY_UNAVAILABLE)'
              : 'keyed admission enabled',
          );
        });
      });
  }

  program
    .command('migrate')
    .description('apply database migrations')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      await withServices(async (s) =>
        print(
          !!opts.json,
          { migrated: true, database: s.db.dialect },
          `database (${s.db.dialect}) is up to date`,
        ),
      );
    });

  const org = registerOperatorCommands(program, { print, withServices });

  registerSpeechCommands(program, org, { print, withServices });
  registerDialogueCommands(program, print);
  registerDubbingCommands(program, print);
  registerNoteCommands(program, print);
  registerModelCommands(program, print);
  registerBatchCommands(program, print);
  registerWorkerTokenCommands(program, { print, withServices });
  registerLoginCommands(program, print);

  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  const program = buildProgram();
  const json = argv.includes('--json');
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CliExit) process.exit(err.code);
    if (err instanceof ClientError) {
      if (json) process.stdout.write(JSON.stringify({ ...err.details, error: err.message }) + '\n');
      process.stderr.write(`lipsync: ${err.message}\n`);
      process.exit(err.exitCode);
    }
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0)
        process.exit(0);
      if (json) process.stdout.write(JSON.stringify({ error: err.message }) + '\n');
      // Commander reports every usage error (unknown option, bad choice, missing argument) with
      // exit code 1; the CLI's contract is 2 for bad usage, 1 for failures.
      process.exit(2);
    }
    if (err instanceof ConfigError) {
      process.stderr.write(err.message + '\n');
      if (json) process.stdout.write(JSON.stringify({ error: err.message, problems: err.problems }) + '\n');
      process.exit(2);
    }
    if (err instanceof AppError) {
      try {
        fail(json, err.message);
      } catch {
        process.exit(1);
      }
    }
    process.stderr.write(`lipsync: ${(err as Error)?.stack ?? String(err)}\n`);
    if (json) process.stdout.write(JSON.stringify({ error: (err as Error)?.message ?? String(err) }) + '\n');
    process.exit(1);
  }
}

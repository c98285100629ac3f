// `lipsync generation get|list|download|wait`: generations read through a running server's API, as
// any client would (`generation cancel`, an operator command, opens the database instead).
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import {
  apiError,
  apiFrom,
  connectionOptions,
  download,
  retryAfterSeconds,
  sleep,
  usageError,
  type Api,
} from './http.js';

type Print = (json: boolean, obj: Record<string, unknown>, text: string) => void;

interface ApiOpts {
  server?: string;
  key?: string;
  json?: boolean;
}

/** Terminal states; every one but COMPLETED makes `wait` exit 1. */
const TERMINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'CANCELED', 'TIMED_OUT']);
/** `wait` gave up at --timeout while the generation was still running. */
export const EXIT_STILL_RUNNING = 3;

const id = (s: string) => encodeURIComponent(s);

const positive = (name: string, max: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new InvalidArgumentError(`--${name} must be an integer from 1 to ${max}.`);
  return n;
};

async function getGeneration(api: Api, genId: string, query = ''): Promise<Record<string, any>> {
  const r = await api('GET', `/v2/generate/${id(genId)}${query}`);
  if (r.status !== 200) throw apiError(`reading generation ${genId}`, r);
  return r.json;
}

function statusLine(g: Record<string, any>): string {
  const code = g.errorCode ?? g.error_code;
  return [g.id, g.status, code, g.error].filter((p) => p !== undefined && p !== null && p !== '').join('  ');
}

/** Long-polls until a terminal state (or the deadline); busy answers are retried after Retry-After. */
async function waitFor(api: Api, genId: string, deadline: number | null): Promise<Record<string, any>> {
  for (;;) {
    const left = deadline === null ? 10 : Math.ceil((deadline - Date.now()) / 1000);
    if (left <= 0) return getGeneration(api, genId);
    const r = await api('GET', `/v2/generate/${id(genId)}?wait=true&timeout=${Math.min(10, left)}`);
    if (r.status === 429 || r.status === 502 || r.status === 503 || r.status === 504) {
      await sleep(retryAfterSeconds(r.headers.get('retry-after'), 2) * 1000);
      continue;
    }
    if (r.status !== 200) throw apiError(`waiting for generation ${genId}`, r);
    if (TERMINAL.has(r.json.status)) return r.json;
  }
}

export function registerGenerationCommands(generation: Command, print: Print): void {
  connectionOptions(
    generation
      .command('get')
      .description('print a generation as the API returns it (JSON)')
      .argument('<id>')
      .option('--progress', 'add progress_percent')
      .option('--quality', "add the engine's quality report"),
  )
    .option('--json', 'print it on one line')
    .action(async (genId: string, opts: ApiOpts & { progress?: boolean; quality?: boolean }) => {
      const include = [opts.progress && 'progress', opts.quality && 'quality'].filter(Boolean);
      const g = await getGeneration(
        apiFrom(opts),
        genId,
        include.length ? `?include=${include.join(',')}` : '',
      );
      print(!!opts.json, g, JSON.stringify(g, null, 2));
    });

  connectionOptions(
    generation
      .command('list')
      .description('list generations, newest first, a page at a time')
      .option('--status <list>', 'only these states, comma-separated (e.g. FAILED,CANCELED)')
      .option('--project <id>', 'only this project')
      .option('--limit <n>', 'generations per page (1 to 100)', positive('limit', 100), 20)
      .option('--cursor <id>', 'the page after this generation (the nextCursor of the previous page)')
      .option('--all', 'every page, not just one'),
  )
    .option('--json', 'print one JSON object: {"items": [...], "nextCursor": id|null}')
    .action(
      async (
        opts: ApiOpts & { status?: string; project?: string; limit: number; cursor?: string; all?: boolean },
      ) => {
        const api = apiFrom(opts);
        const items: Record<string, any>[] = [];
        const limit = opts.all ? 100 : opts.limit;
        let cursor = opts.cursor;
        let nextCursor: string | null = null;
        for (;;) {
          const q = new URLSearchParams({ limit: String(limit) });
          if (opts.status) q.set('status', opts.status);
          if (opts.project) q.set('projectId', opts.project);
          if (cursor) q.set('cursor', cursor);
          const r = await api('GET', `/v2/generations?${q}`);
          if (r.status !== 200) throw apiError('listing generations', r);
          const page = r.json as Record<string, any>[];
          items.push(...page);
          // A full page may have a next one; the API tells no more than that.
          nextCursor = page.length === limit ? String(page[page.length - 1].id) : null;
          if (!opts.all || nextCursor === null) break;
          cursor = nextCursor;
        }
        const lines = items.map((g) => `${g.id}  ${String(g.status).padEnd(10)}  ${g.model}  ${g.createdAt}`);
        if (nextCursor) lines.push(`more: lipsync generation list --limit ${limit} --cursor ${nextCursor}`);
        print(!!opts.json, { items, nextCursor }, lines.join('\n') || '(no generations)');
      },
    );

  connectionOptions(
    generation
      .command('download')
      .description('download the output video of a completed generation')
      .argument('<id>')
      .option('--out <file>', 'where to write it (default <id>.mp4)'),
  )
    .option('--json', 'print one JSON object')
    .action(async (genId: string, opts: ApiOpts & { out?: string }) => {
      const api = apiFrom(opts);
      const d = await api('GET', `/v2/generations/${id(genId)}/download`);
      if (d.status !== 200) throw apiError(`getting the output of generation ${genId}`, d);
      const url = d.text.trim();
      const out = opts.out ?? `${genId}.${/\.mov(\?|$)/.test(url) ? 'mov' : 'mp4'}`;
      await download(url, out, `the output of generation ${genId}`);
      print(!!opts.json, { id: genId, output: out }, out);
    });

  connectionOptions(
    generation
      .command('wait')
      .description(
        'wait until a generation has finished: exit 0 when COMPLETED, 1 when it ended otherwise, 3 at --timeout',
      )
      .argument('<id>')
      .option('--timeout <seconds>', 'give up after this long (default: wait as long as it takes)', (v) =>
        Number(v),
      ),
  )
    .option('--json', 'print the generation as one JSON object')
    .action(async (genId: string, opts: ApiOpts & { timeout?: number }) => {
      if (opts.timeout !== undefined && !(opts.timeout > 0))
        throw usageError('--timeout must be a positive number of seconds');
      const deadline = opts.timeout === undefined ? null : Date.now() + opts.timeout * 1000;
      const g = await waitFor(apiFrom(opts), genId, deadline);
      const json = !!opts.json;
      print(json, g, statusLine(g));
      if (g.status === 'COMPLETED') return;
      // The generation is printed above (one JSON object with --json); the reason goes to stderr.
      const running = !TERMINAL.has(g.status);
      process.stderr.write(
        running
          ? `lipsync: generation ${genId} is still ${g.status} after ${opts.timeout} s\n`
          : `lipsync: generation ${genId} ended ${g.status}\n`,
      );
      process.exitCode = running ? EXIT_STILL_RUNNING : 1;
    });
}

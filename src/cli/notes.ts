// `lipsync notes`: review notes pinned to moments of a generation's output, through a running
// server's API (GET/POST/PATCH/DELETE /v2/generations/{id}/notes, our extension).
import { InvalidArgumentError, type Command } from 'commander';
import { apiError, apiFrom, connectionOptions, type Api } from './http.js';
import { table } from './table.js';

type Print = (json: boolean, obj: Record<string, unknown>, text: string) => void;

interface ApiOpts {
  server?: string;
  key?: string;
  json?: boolean;
}

const enc = encodeURIComponent;
const notesPath = (gen: string, note?: string) =>
  `/v2/generations/${enc(gen)}/notes${note === undefined ? '' : `/${enc(note)}`}`;

/** Seconds as given on the command line, to the API's whole milliseconds. */
function seconds(v: string): number {
  const s = Number(v);
  if (v.trim() === '' || !Number.isFinite(s) || s < 0)
    throw new InvalidArgumentError('--at must be a number of seconds from 0 (e.g. 12.5).');
  return Math.round(s * 1000);
}

/** 83500 ms as 1:23.500, as the studio's timeline shows it. */
export function clock(ms: number): string {
  const m = Math.floor(ms / 60_000);
  const s = ((ms % 60_000) / 1000).toFixed(3).padStart(6, '0');
  return `${m}:${s}`;
}

async function send<T = Record<string, any>>(
  api: Api,
  what: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const r = await api(method, path, body);
  if (r.status < 200 || r.status > 299) throw apiError(what, r);
  return r.json as T;
}

function noteLine(n: Record<string, any>): string {
  return `${n.id}  ${clock(n.atMs)}  ${n.resolved ? 'resolved' : 'open'}  ${n.text}`;
}

export function registerNoteCommands(program: Command, print: Print): void {
  const notes = connectionOptions(
    program
      .command('notes')
      .description(
        "list a generation's review notes (by moment); add, resolve, reopen or delete one with the subcommands",
      )
      .argument('[generation-id]'),
  )
    .option('--json', 'print one JSON object: {"items": [...]}')
    .action(async (gen: string | undefined, opts: ApiOpts) => {
      if (gen === undefined) return notes.help({ error: true });
      const api = apiFrom(opts);
      const items = await send<Record<string, any>[]>(
        api,
        `listing the notes of ${gen}`,
        'GET',
        notesPath(gen),
      );
      const rows = items.map((n) => [
        n.id,
        clock(n.atMs),
        n.resolved ? 'resolved' : 'open',
        n.author,
        n.text,
      ]);
      print(
        !!opts.json,
        { items },
        rows.length ? table([['ID', 'AT', 'STATE', 'AUTHOR', 'TEXT'], ...rows]) : '(no notes)',
      );
    });

  // The listing's --server, --key and --json are parsed by `notes` wherever they stand on the line.
  const withParent = <T extends ApiOpts>(own: T): T => ({ ...(notes.opts() as ApiOpts), ...own });

  connectionOptions(
    notes
      .command('add')
      .description('pin a note to a moment of the output')
      .argument('<generation-id>')
      .argument('<text...>', 'the note (the words are joined with spaces)')
      .requiredOption('--at <seconds>', 'the moment in the output, in seconds', seconds),
  )
    .option('--json', 'print the note as one JSON object')
    .action(async (gen: string, words: string[], own: ApiOpts & { at: number }) => {
      const opts = withParent(own);
      const n = await send(apiFrom(opts), `adding a note to ${gen}`, 'POST', notesPath(gen), {
        atMs: opts.at,
        text: words.join(' '),
      });
      print(!!opts.json, n, noteLine(n));
    });

  for (const [name, resolved, what] of [
    ['resolve', true, 'mark a note resolved'],
    ['reopen', false, 'mark a resolved note open again'],
  ] as const) {
    connectionOptions(notes.command(name).description(what).argument('<generation-id>').argument('<note-id>'))
      .option('--json', 'print the note as one JSON object')
      .action(async (gen: string, note: string, own: ApiOpts) => {
        const opts = withParent(own);
        const n = await send(apiFrom(opts), `changing note ${note}`, 'PATCH', notesPath(gen, note), {
          resolved,
        });
        print(!!opts.json, n, noteLine(n));
      });
  }

  connectionOptions(
    notes.command('delete').description('delete a note').argument('<generation-id>').argument('<note-id>'),
  )
    .option('--json', 'print the deleted note as one JSON object')
    .action(async (gen: string, note: string, own: ApiOpts) => {
      const opts = withParent(own);
      const n = await send(apiFrom(opts), `deleting note ${note}`, 'DELETE', notesPath(gen, note));
      print(!!opts.json, n, `deleted ${n.id}`);
    });
}

// Scans a client-visible error body for internal detail that must stay in the server log: file
// paths, the names of the tools the server runs, and text that reads like a tool's stderr or a stack.
// Any suite can call assertNoLeaks(res.json(), [t.dataDir]) on the errors it provokes.
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';

/** The programs the server starts; a client never needs their names. */
const TOOL_NAMES = ['ffprobe', 'ffmpeg', 'festival', 'text2wave', 'espeak', 'pocketsphinx', 'sox'];

/** Absolute paths on the server's disk (URL paths such as /v2/generate are not among these roots). */
const PATH_PATTERN =
  /(?:^|[\s'"`(=:,[])(?:\/(?:tmp|var|home|usr|etc|opt|proc|root|srv|work|mnt|dev|run|private|Users|data)\/|[A-Za-z]:\\)/;

/** Lines that tools, the runtime or the OS write, not people writing for users. */
const STDERR_PATTERNS: readonly RegExp[] = [
  /Invalid data found when processing input/i,
  /Error opening input/i,
  /moov atom not found/i,
  /No such file or directory/i,
  /\bE(?:NOENT|ACCES|PERM|PIPE|CONNREFUSED|MFILE|NOSPC)\b/,
  /\bSIG(?:KILL|TERM|SEGV|ABRT)\b/,
  /\bexit(?:ed)? (?:code|status) \d+/i,
  /^\s*at .+:\d+:\d+\)?$/m,
  /node:internal/,
  /\b(?:Type|Reference|Syntax|Range)Error:/,
  /Traceback \(most recent call last\)/,
  /\[(?:in|out)#\d/,
  /\n/,
];

/** Every string in a JSON value with where it is (`message`, `errors[0].detail`, ...). */
function stringsOf(value: unknown, at: string, out: [string, string][]): [string, string][] {
  if (typeof value === 'string') out.push([at, value]);
  else if (Array.isArray(value)) value.forEach((v, i) => stringsOf(v, `${at}[${i}]`, out));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      // docsUrl is a URL the service writes itself; requestId an opaque id.
      if (at === '' && (k === 'docsUrl' || k === 'requestId')) continue;
      stringsOf(v, at === '' ? k : `${at}.${k}`, out);
    }
  }
  return out;
}

/**
 * What in an error body gives away internals, one line per finding ([] when clean). `paths` are
 * folders of this run that must not appear (the data folder); the OS temp folder is always checked.
 */
export function errorBodyLeaks(body: unknown, paths: readonly string[] = []): string[] {
  const found: string[] = [];
  const folders = [tmpdir(), ...paths].filter((p) => p.length > 1);
  for (const [at, text] of stringsOf(body, '', [])) {
    for (const folder of folders) {
      if (text.includes(folder)) found.push(`${at} holds the path ${folder}: ${JSON.stringify(text)}`);
    }
    if (PATH_PATTERN.test(text)) found.push(`${at} holds a server path: ${JSON.stringify(text)}`);
    for (const tool of TOOL_NAMES) {
      if (new RegExp(`\\b${tool}\\b`, 'i').test(text))
        found.push(`${at} names the tool ${tool}: ${JSON.stringify(text)}`);
    }
    for (const p of STDERR_PATTERNS) {
      if (p.test(text)) found.push(`${at} reads like stderr (${p}): ${JSON.stringify(text)}`);
    }
  }
  return found;
}

/** Fails, listing every finding, when the error body leaks a path, a tool's name or stderr. */
export function assertNoLeaks(body: unknown, paths: readonly string[] = []): void {
  const found = errorBodyLeaks(body, paths);
  assert.deepEqual(found, [], `the error body leaks internals:\n${found.join('\n')}`);
}

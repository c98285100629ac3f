// Offline translation with Apertium (Debian's apertium-* pairs, installed by
// scripts/install-system-packages.sh). Every segment of a call goes through one apertium run per
// step, one segment per paragraph, so a dub of a hundred sentences starts a handful of processes.
// A language with no direct pair goes through Spanish in two runs (lower quality; see
// src/domain/dubbing-languages.ts).
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  LOCAL_DIRECT_PAIRS,
  localRoutes,
  type DirectPair,
  type TranslationRoute,
} from '../domain/dubbing-languages.js';
import { runTool, SpeechToolError } from '../speech/tools.js';
import {
  tidy,
  TranslationError,
  type TextSegment,
  type TranslateOptions,
  type TranslationProvider,
} from './types.js';

export const APERTIUM_MODES_DIR = '/usr/share/apertium/modes';

/** Our language pair -> the Debian package's mode (their code styles differ per package). */
export const APERTIUM_MODES: Readonly<Record<string, string>> = {
  'en>es': 'eng-spa',
  'es>en': 'spa-eng',
  'en>ca': 'eng-cat',
  'ca>en': 'cat-eng',
  'en>gl': 'en-gl',
  'gl>en': 'gl-en',
  'en>eo': 'en-eo',
  'eo>en': 'eo-en',
  'en>sr': 'eng-hbs_SR',
  'en>hr': 'eng-hbs_HR',
  'en>bs': 'eng-hbs_BS',
  'sr>en': 'hbs-eng',
  'hr>en': 'hbs-eng',
  'bs>en': 'hbs-eng',
  'es>pt': 'es-pt',
  'es>pt-br': 'es-pt_BR',
  'pt>es': 'pt-es',
  'es>it': 'spa-ita',
  'it>es': 'ita-spa',
  'es>fr': 'es-fr',
  'fr>es': 'fr-es',
};

/** The direct pairs whose mode files are installed in `dir`. */
export async function installedApertiumPairs(dir = APERTIUM_MODES_DIR): Promise<DirectPair[]> {
  let files: string[];
  try {
    files = await readdir(dir);
  } catch {
    return [];
  }
  const modes = new Set(files.filter((f) => f.endsWith('.mode')).map((f) => f.slice(0, -'.mode'.length)));
  return LOCAL_DIRECT_PAIRS.filter((p) => modes.has(APERTIUM_MODES[`${p.from}>${p.to}`] ?? ''));
}

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * A segment of three words or more that comes back word for word as it went in was not translated
 * (a wrong source language, or text Apertium does not know at all): a name alone may pass unchanged.
 */
function untranslated(source: string, output: string): boolean {
  const words = source.match(WORD) ?? [];
  return words.length >= 3 && source.toLowerCase() === output.toLowerCase();
}

/** A sentence that began with a capital begins with one again (Apertium sometimes drops it). */
function initialCase(source: string, output: string): string {
  const first = /\p{L}/u.exec(source)?.[0];
  if (!first || first === first.toLowerCase()) return output;
  return output.replace(/\p{L}/u, (c) => c.toUpperCase());
}

export interface ApertiumOptions {
  /** The direct pairs installed (installedApertiumPairs()). */
  pairs: readonly DirectPair[];
  /** One apertium run's deadline (default 60 s). */
  timeoutMs?: number;
}

export class ApertiumTranslationProvider implements TranslationProvider {
  readonly name = 'local' as const;
  private readonly routes: TranslationRoute[];
  private readonly timeoutMs: number;

  constructor(opts: ApertiumOptions) {
    this.routes = localRoutes(opts.pairs);
    this.timeoutMs = opts.timeoutMs ?? 60_000;
  }

  /** The route a pair takes, or null when it is not offered here. */
  route(from: string, to: string): TranslationRoute | null {
    return this.routes.find((r) => r.from === from && r.to === to) ?? null;
  }

  async translate(segments: readonly TextSegment[], opts: TranslateOptions): Promise<TextSegment[]> {
    const from = opts.from ?? 'en';
    const route = this.route(from, opts.to);
    if (!route) throw new TranslationError('unsupported', this.name, `no local pair ${from}>${opts.to}`);
    const steps = route.via ? [`${from}>${route.via}`, `${route.via}>${opts.to}`] : [`${from}>${opts.to}`];
    const sources = segments.map((s) => tidy(s.text));
    let texts = sources;
    for (const step of steps) texts = await this.run(APERTIUM_MODES[step]!, texts, opts.signal);
    return segments.map((s, i) => {
      const text = texts[i]!;
      if (sources[i] !== '' && (text === '' || untranslated(sources[i]!, text)))
        throw new TranslationError(
          'untranslatable',
          this.name,
          `segment ${s.id} came back ${text === '' ? 'empty' : 'untranslated'}`,
          { segmentId: s.id },
        );
      return { id: s.id, text: initialCase(sources[i]!, text) };
    });
  }

  /**
   * One apertium run over all texts, one paragraph each (a blank line between them). Should the
   * paragraphs not come back one for one, each text gets a run of its own.
   */
  private async run(mode: string, texts: readonly string[], signal?: AbortSignal): Promise<string[]> {
    const nonEmpty = texts.map((t, i) => ({ t, i })).filter((x) => x.t !== '');
    const result = texts.map(() => '');
    if (nonEmpty.length === 0) return result;
    let paragraphs = await this.apertium(mode, nonEmpty.map((x) => x.t).join('\n\n'), signal);
    if (paragraphs.length !== nonEmpty.length) {
      paragraphs = [];
      for (const x of nonEmpty) paragraphs.push((await this.apertium(mode, x.t, signal)).join(' '));
    }
    nonEmpty.forEach((x, k) => (result[x.i] = paragraphs[k]!));
    return result;
  }

  private async apertium(mode: string, input: string, signal?: AbortSignal): Promise<string[]> {
    let out: string;
    // The input goes in a file: apertium opens /dev/stdin, which fails on the socket Node pipes through.
    const dir = await mkdtemp(join(tmpdir(), 'lipsync-apertium-'));
    try {
      const file = join(dir, 'in.txt');
      await writeFile(file, `${input}\n`);
      // -u: unknown words lose Apertium's marks (*, #, @) and stay as they were written (names).
      out = await runTool('apertium', ['-u', '-f', 'txt', mode, file], { timeoutMs: this.timeoutMs, signal });
    } catch (err) {
      if (err instanceof SpeechToolError) {
        const reason =
          err.reason === 'timeout'
            ? 'timeout'
            : err.reason === 'aborted'
              ? 'aborted'
              : err.reason === 'busy'
                ? 'busy'
                : 'unavailable';
        throw new TranslationError(reason, this.name, err.message, { cause: err });
      }
      throw err;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return out
      .split(/\n\s*\n/)
      .map(tidy)
      .filter((p) => p !== '');
  }
}

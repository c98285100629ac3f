// Translation through DeepL's API (`POST /v2/translate`, `Authorization: DeepL-Auth-Key KEY`). Free
// keys (ending in `:fx`) talk to api-free.deepl.com, others to api.deepl.com, unless a URL is set.
import { endpoint } from '../speech/http-speech.js';
import { translationRequest } from './http.js';
import {
  tidy,
  TranslationError,
  type TextSegment,
  type TranslateOptions,
  type TranslationProvider,
} from './types.js';

export interface DeepLOptions {
  apiKey: string;
  /** Base URL; null picks the free or pro API from the key. */
  baseUrl: string | null;
  timeoutMs?: number;
  allowPrivate: boolean;
}

/** DeepL takes at most 50 texts per request. */
const BATCH = 50;

/** DeepL's code for our target code: plain `en` and `pt` targets are deprecated there. */
export function deeplTarget(code: string): string {
  if (code === 'en') return 'EN-US';
  if (code === 'pt') return 'PT-PT';
  return code.toUpperCase();
}

export function deeplBaseUrl(apiKey: string, configured: string | null): string {
  return configured ?? (apiKey.endsWith(':fx') ? 'https://api-free.deepl.com' : 'https://api.deepl.com');
}

export class DeepLTranslationProvider implements TranslationProvider {
  readonly name = 'deepl' as const;
  private readonly baseUrl: string;

  constructor(private readonly opts: DeepLOptions) {
    this.baseUrl = deeplBaseUrl(opts.apiKey, opts.baseUrl);
  }

  async translate(segments: readonly TextSegment[], opts: TranslateOptions): Promise<TextSegment[]> {
    const out: TextSegment[] = [];
    for (let i = 0; i < segments.length; i += BATCH) {
      const batch = segments.slice(i, i + BATCH);
      const json = await translationRequest({
        provider: this.name,
        url: endpoint(this.baseUrl, '/v2/translate'),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: `DeepL-Auth-Key ${this.opts.apiKey}`,
        },
        body: JSON.stringify({
          text: batch.map((s) => tidy(s.text)),
          target_lang: deeplTarget(opts.to),
          ...(opts.from ? { source_lang: opts.from.split('-')[0]!.toUpperCase() } : {}),
        }),
        timeoutMs: this.opts.timeoutMs ?? 60_000,
        allowPrivate: this.opts.allowPrivate,
        secret: this.opts.apiKey,
        signal: opts.signal,
      });
      const list = (json as { translations?: unknown } | null)?.translations;
      if (!Array.isArray(list) || list.length !== batch.length)
        throw new TranslationError(
          'malformed',
          this.name,
          `expected ${batch.length} translations, got ${Array.isArray(list) ? list.length : 'none'}`,
        );
      batch.forEach((s, k) => {
        const text = (list[k] as { text?: unknown } | null)?.text;
        if (typeof text !== 'string')
          throw new TranslationError('malformed', this.name, `translation ${k} has no text`);
        if (tidy(text) === '' && tidy(s.text) !== '')
          throw new TranslationError('untranslatable', this.name, `segment ${s.id} came back empty`, {
            segmentId: s.id,
          });
        out.push({ id: s.id, text: tidy(text) });
      });
    }
    return out;
  }
}

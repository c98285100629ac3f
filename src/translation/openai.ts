// Translation through any server speaking OpenAI's chat completions API (`POST /v1/chat/completions`):
// OpenAI itself, or self-hosted servers (llama.cpp, vLLM, Ollama, LocalAI). The model gets the
// segments as a JSON array and must answer a JSON array of as many translations; anything else is a
// malformed answer, and an empty translation an untranslatable segment.
import { LANGUAGE_NAMES } from '../domain/dubbing-languages.js';
import { endpoint } from '../speech/http-speech.js';
import { translationRequest } from './http.js';
import {
  tidy,
  TranslationError,
  type TextSegment,
  type TranslateOptions,
  type TranslationProvider,
} from './types.js';

export interface OpenAiTranslationOptions {
  /** The server's root, without `/v1`. */
  baseUrl: string;
  apiKey: string | null;
  model: string;
  /** One request's deadline (default 60 000). */
  timeoutMs?: number;
  allowPrivate: boolean;
  /** Segments per request (default 40): long batches make models skip or merge lines. */
  batchSize?: number;
}

const name = (code: string): string => LANGUAGE_NAMES[code] ?? code;

/** The first JSON array in a model's answer (models wrap it in prose or code fences). */
function arrayIn(content: string): unknown {
  const start = content.indexOf('[');
  const end = content.lastIndexOf(']');
  if (start < 0 || end <= start) return null;
  try {
    return JSON.parse(content.slice(start, end + 1));
  } catch {
    return null;
  }
}

export class OpenAiTranslationProvider implements TranslationProvider {
  readonly name = 'openai' as const;
  private readonly timeoutMs: number;
  private readonly batchSize: number;

  constructor(private readonly opts: OpenAiTranslationOptions) {
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.batchSize = Math.max(1, opts.batchSize ?? 40);
  }

  async translate(segments: readonly TextSegment[], opts: TranslateOptions): Promise<TextSegment[]> {
    const out: TextSegment[] = [];
    for (let i = 0; i < segments.length; i += this.batchSize) {
      const batch = segments.slice(i, i + this.batchSize);
      const texts = await this.batch(
        batch.map((s) => tidy(s.text)),
        opts,
      );
      batch.forEach((s, k) => {
        const text = tidy(texts[k]!);
        if (text === '' && tidy(s.text) !== '')
          throw new TranslationError('untranslatable', this.name, `segment ${s.id} came back empty`, {
            segmentId: s.id,
          });
        out.push({ id: s.id, text });
      });
    }
    return out;
  }

  private async batch(texts: string[], opts: TranslateOptions): Promise<string[]> {
    const source = opts.from ? `from ${name(opts.from)} ` : '';
    const key = this.opts.apiKey;
    const json = await translationRequest({
      provider: this.name,
      url: endpoint(this.opts.baseUrl, '/v1/chat/completions'),
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      },
      body: JSON.stringify({
        model: this.opts.model,
        temperature: 0,
        messages: [
          {
            role: 'system',
            content:
              `Translate each string of the JSON array ${source}into ${name(opts.to)} (${opts.to}) for dubbing a video. ` +
              'Keep names, numbers and punctuation. Answer with only a JSON array of strings: ' +
              'as many as given, in the same order.',
          },
          { role: 'user', content: JSON.stringify(texts) },
        ],
      }),
      timeoutMs: this.timeoutMs,
      allowPrivate: this.opts.allowPrivate,
      secret: key,
      signal: opts.signal,
    });
    const content = (json as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0]
      ?.message?.content;
    if (typeof content !== 'string')
      throw new TranslationError('malformed', this.name, 'the answer has no choices[0].message.content');
    const list = arrayIn(content);
    if (!Array.isArray(list) || !list.every((t) => typeof t === 'string'))
      throw new TranslationError('malformed', this.name, 'the answer is not a JSON array of strings');
    if (list.length !== texts.length)
      throw new TranslationError(
        'malformed',
        this.name,
        `the answer has ${list.length} translations for ${texts.length} segments`,
      );
    return list;
  }
}

// Protocol-level fakes of the translation services: OpenAI-compatible chat completions
// (`POST /v1/chat/completions`) and DeepL (`POST /v2/translate`). Each records its requests and
// answers in the mode it was told. In 'ok' mode they "translate" with a small word table, so a test
// can tell which text went where and in which order.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeTranslationMode =
  | 'ok'
  /** Accepts the request and never answers. */
  | 'hang'
  | 'invalid_key'
  /** 429 with Retry-After: 1. */
  | 'rate_limited'
  | 'server_error'
  /** 200 whose body is not JSON. */
  | 'garbage'
  /** 200, valid JSON, one translation too few. */
  | 'wrong_count'
  /** 200, valid JSON, the first translation empty. */
  | 'empty_text'
  /** DeepL's 456 quota exceeded. */
  | 'quota';

export interface RecordedTranslationRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  json: any;
}

const WORDS: Record<string, string> = { hello: 'hola', world: 'mundo', good: 'buenos', morning: 'días' };

/** The fakes' "translation": word by word from WORDS, everything else kept. */
export function fakeTranslate(text: string): string {
  return text.replace(/[A-Za-z]+/g, (w) => WORDS[w.toLowerCase()] ?? w);
}

abstract class FakeTranslationServer {
  readonly requests: RecordedTranslationRequest[] = [];
  private server: http.Server | null = null;
  private queued: FakeTranslationMode[] = [];
  private mode: FakeTranslationMode = 'ok';

  constructor(protected readonly key: string) {}

  get url(): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  /** `mode` for every later request, or, with `times`, for the next `times` requests only. */
  setMode(mode: FakeTranslationMode, times?: number): void {
    if (times === undefined) [this.mode, this.queued] = [mode, []];
    else for (let i = 0; i < times; i++) this.queued.push(mode);
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let json: any = null;
        try {
          json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          json = null;
        }
        this.requests.push({ path: req.url ?? '', headers: req.headers, json });
        const mode = this.queued.shift() ?? this.mode;
        if (mode === 'hang') return;
        const send = (status: number, body: string, headers: Record<string, string> = {}): void => {
          res.writeHead(status, { 'content-type': 'application/json', ...headers });
          res.end(body);
        };
        if (!this.authorized(req.headers.authorization) || mode === 'invalid_key')
          return send(this.unauthorizedStatus, JSON.stringify({ message: 'Wrong key sk-provider-secret' }));
        if (mode === 'rate_limited')
          return send(429, JSON.stringify({ message: 'Too many requests' }), { 'retry-after': '1' });
        if (mode === 'quota') return send(456, JSON.stringify({ message: 'Quota exceeded' }));
        if (mode === 'server_error') return send(502, '<html>Bad gateway</html>');
        if (mode === 'garbage') return send(200, 'this is not json');
        const texts = this.texts(json);
        if (!texts) return send(400, JSON.stringify({ message: 'bad request' }));
        let out = texts.map(fakeTranslate);
        if (mode === 'wrong_count') out = out.slice(1);
        if (mode === 'empty_text') out[0] = '';
        send(200, this.answer(out));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  protected abstract readonly unauthorizedStatus: number;
  protected abstract authorized(header: string | undefined): boolean;
  /** The texts the request asks to translate, or null when it breaks the protocol. */
  protected abstract texts(json: any): string[] | null;
  protected abstract answer(texts: string[]): string;
}

export class FakeOpenAiChatServer extends FakeTranslationServer {
  protected readonly unauthorizedStatus = 401;

  protected authorized(header: string | undefined): boolean {
    return header === `Bearer ${this.key}`;
  }

  protected texts(json: any): string[] | null {
    const user = json?.messages?.find((m: any) => m.role === 'user')?.content;
    if (typeof json?.model !== 'string' || typeof user !== 'string') return null;
    try {
      const list = JSON.parse(user);
      return Array.isArray(list) ? list : null;
    } catch {
      return null;
    }
  }

  /** Models often wrap the array in a code fence: the client must find it. */
  protected answer(texts: string[]): string {
    const content = `\`\`\`json\n${JSON.stringify(texts)}\n\`\`\``;
    return JSON.stringify({
      id: 'chatcmpl-1',
      choices: [{ index: 0, message: { role: 'assistant', content } }],
    });
  }
}

export class FakeDeepLServer extends FakeTranslationServer {
  protected readonly unauthorizedStatus = 403;

  protected authorized(header: string | undefined): boolean {
    return header === `DeepL-Auth-Key ${this.key}`;
  }

  protected texts(json: any): string[] | null {
    if (!Array.isArray(json?.text) || typeof json?.target_lang !== 'string') return null;
    return json.text;
  }

  protected answer(texts: string[]): string {
    return JSON.stringify({
      translations: texts.map((text) => ({ detected_source_language: 'EN', text })),
    });
  }
}

// Which languages a dub can go from and to, per translation provider (docs/dubbing.md). Pure: the
// caller says which offline pairs are installed and which remote providers are configured.
import { AppError } from './errors.js';

export const TRANSLATION_PROVIDERS = ['local', 'openai', 'deepl'] as const;
export type TranslationProviderName = (typeof TRANSLATION_PROVIDERS)[number];

/** Lower-case ISO 639-1 codes (with a region where a provider tells them apart). */
export const LANGUAGE_NAMES: Readonly<Record<string, string>> = {
  ar: 'Arabic',
  bg: 'Bulgarian',
  bs: 'Bosnian',
  ca: 'Catalan',
  cs: 'Czech',
  da: 'Danish',
  de: 'German',
  el: 'Greek',
  en: 'English',
  'en-gb': 'English (British)',
  'en-us': 'English (American)',
  eo: 'Esperanto',
  es: 'Spanish',
  et: 'Estonian',
  fi: 'Finnish',
  fr: 'French',
  gl: 'Galician',
  he: 'Hebrew',
  hi: 'Hindi',
  hr: 'Croatian',
  hu: 'Hungarian',
  id: 'Indonesian',
  it: 'Italian',
  ja: 'Japanese',
  ko: 'Korean',
  lt: 'Lithuanian',
  lv: 'Latvian',
  nb: 'Norwegian (Bokmål)',
  nl: 'Dutch',
  pl: 'Polish',
  pt: 'Portuguese',
  'pt-br': 'Portuguese (Brazilian)',
  'pt-pt': 'Portuguese (European)',
  ro: 'Romanian',
  ru: 'Russian',
  sk: 'Slovak',
  sl: 'Slovenian',
  sr: 'Serbian',
  sv: 'Swedish',
  th: 'Thai',
  tr: 'Turkish',
  uk: 'Ukrainian',
  vi: 'Vietnamese',
  zh: 'Chinese',
};

/** A pair the offline engine translates in one step (an Apertium pair Debian ships). */
export interface DirectPair {
  from: string;
  to: string;
  /** What to expect of it, where it is weaker than the rest. */
  note?: string;
}

const HBS_NOTE = 'small dictionary: many words stay in English';

/**
 * The pairs scripts/install-system-packages.sh installs: English to and from Spanish, Catalan,
 * Galician, Esperanto and Serbo-Croatian, and Spanish to and from Portuguese, Italian and French
 * (used as second steps of a pivot through Spanish).
 */
export const LOCAL_DIRECT_PAIRS: readonly DirectPair[] = [
  { from: 'en', to: 'es' },
  { from: 'es', to: 'en' },
  { from: 'en', to: 'ca' },
  { from: 'ca', to: 'en' },
  { from: 'en', to: 'gl' },
  { from: 'gl', to: 'en' },
  { from: 'en', to: 'eo' },
  { from: 'eo', to: 'en' },
  ...['sr', 'hr', 'bs'].flatMap((l) => [
    { from: 'en', to: l, note: HBS_NOTE },
    { from: l, to: 'en', note: HBS_NOTE },
  ]),
  { from: 'es', to: 'pt' },
  { from: 'es', to: 'pt-br' },
  { from: 'pt', to: 'es' },
  { from: 'es', to: 'it' },
  { from: 'it', to: 'es' },
  { from: 'es', to: 'fr' },
  { from: 'fr', to: 'es' },
];

/** The language every pivot goes through: the best-covered one in Debian's Apertium pairs. */
export const PIVOT_LANGUAGE = 'es';

export interface TranslationRoute {
  from: string;
  to: string;
  quality: 'direct' | 'pivot';
  /** The pivot language of a two-step route. */
  via?: string;
  note?: string;
}

/** The direct pairs, then two-step routes through Spanish where no direct pair exists. */
export function localRoutes(direct: readonly DirectPair[]): TranslationRoute[] {
  const key = (a: string, b: string): string => `${a}>${b}`;
  const have = new Set(direct.map((p) => key(p.from, p.to)));
  const routes: TranslationRoute[] = direct.map((p) => ({
    from: p.from,
    to: p.to,
    quality: 'direct',
    ...(p.note ? { note: p.note } : {}),
  }));
  for (const first of direct) {
    if (first.to !== PIVOT_LANGUAGE) continue;
    for (const second of direct) {
      if (second.from !== PIVOT_LANGUAGE || second.to === first.from) continue;
      if (have.has(key(first.from, second.to))) continue;
      have.add(key(first.from, second.to));
      routes.push({
        from: first.from,
        to: second.to,
        quality: 'pivot',
        via: PIVOT_LANGUAGE,
        note: 'two steps through Spanish: lower quality, errors of both steps add up',
      });
    }
  }
  return routes;
}

// DeepL's documented languages (developers.deepl.com, "Supported languages"): English and
// Portuguese targets name a variant; the plain codes are taken as American English and European
// Portuguese.
const DEEPL_COMMON = [
  'ar', 'bg', 'cs', 'da', 'de', 'el', 'es', 'et', 'fi', 'fr', 'he', 'hu', 'id', 'it', 'ja', 'ko',
  'lt', 'lv', 'nb', 'nl', 'pl', 'ro', 'ru', 'sk', 'sl', 'sv', 'th', 'tr', 'uk', 'vi', 'zh',
]; // prettier-ignore
export const DEEPL_SOURCES: readonly string[] = [...DEEPL_COMMON, 'en', 'pt'].sort();
export const DEEPL_TARGETS: readonly string[] = [
  ...DEEPL_COMMON,
  'en',
  'en-gb',
  'en-us',
  'pt',
  'pt-br',
  'pt-pt',
].sort();

// A general chat model translates between far more languages; these are the ones this service
// also has local voices for or that DeepL lists, so a dub has a fair chance end to end.
export const OPENAI_LANGUAGES: readonly string[] = Object.keys(LANGUAGE_NAMES)
  .filter((c) => !c.includes('-'))
  .sort();

export interface LanguageEntry {
  code: string;
  name: string;
}

export interface ProviderLanguages {
  provider: TranslationProviderName;
  /** Configured and installed on this server. */
  available: boolean;
  note: string;
  sources: LanguageEntry[];
  targets: LanguageEntry[];
  /** The routes, for a provider that does not go from every source to every target. */
  pairs?: TranslationRoute[];
}

export interface DubbingLanguages {
  providers: ProviderLanguages[];
}

export interface CatalogueInput {
  /** The direct offline pairs installed on this server. */
  localPairs: readonly DirectPair[];
  openai: boolean;
  deepl: boolean;
}

const entries = (codes: Iterable<string>): LanguageEntry[] =>
  [...new Set(codes)].sort().map((code) => ({ code, name: LANGUAGE_NAMES[code] ?? code }));

export function dubbingLanguages(input: CatalogueInput): DubbingLanguages {
  const routes = localRoutes(input.localPairs);
  return {
    providers: [
      {
        provider: 'local',
        available: routes.length > 0,
        note: 'Offline rule-based translation (Apertium). The local recognizer hears English only: other sources need a provider transcript.',
        sources: entries(routes.map((r) => r.from)),
        targets: entries(routes.map((r) => r.to)),
        pairs: routes,
      },
      {
        provider: 'openai',
        available: input.openai,
        note: 'An OpenAI-compatible chat model; quality depends on the configured model.',
        sources: entries(OPENAI_LANGUAGES),
        targets: entries(OPENAI_LANGUAGES),
      },
      {
        provider: 'deepl',
        available: input.deepl,
        note: "DeepL's API; `en` and `pt` targets are American English and European Portuguese.",
        sources: entries(DEEPL_SOURCES),
        targets: entries(DEEPL_TARGETS),
      },
    ],
  };
}

/** What the source language `auto` means per provider: the local recognizer hears English only. */
const AUTO_SOURCE: Readonly<Record<TranslationProviderName, string | null>> = {
  local: 'en',
  openai: null,
  deepl: null,
};

export interface CheckedPair {
  provider: TranslationProviderName;
  /** null: the provider detects it. */
  from: string | null;
  to: string;
  route: TranslationRoute | null;
}

function normalize(code: string): string {
  return code.trim().toLowerCase().replace('_', '-');
}

/**
 * The pair a dub asks for, or 422 `dubbing_language_unsupported` naming what the provider offers.
 * `sourceLang` 'auto' (or absent) lets a remote provider detect it; locally it means English.
 */
export function checkDubbingPair(
  catalogue: DubbingLanguages,
  provider: TranslationProviderName,
  sourceLang: string | null | undefined,
  targetLang: string,
): CheckedPair {
  const entry = catalogue.providers.find((p) => p.provider === provider);
  const to = normalize(targetLang);
  const asked = sourceLang == null || normalize(sourceLang) === 'auto' ? null : normalize(sourceLang);
  const from = asked ?? AUTO_SOURCE[provider];
  const codes = (list: LanguageEntry[]): string[] => list.map((l) => l.code);
  const refuse = (field: string, message: string): never => {
    throw new AppError('dubbing_language_unsupported', {
      field,
      message,
      details: {
        supported: {
          provider,
          available: entry?.available ?? false,
          sources: entry ? codes(entry.sources) : [],
          targets: entry ? codes(entry.targets) : [],
          ...(entry?.pairs ? { pairs: entry.pairs.map((r) => `${r.from}>${r.to}`) } : {}),
        },
      },
    });
  };
  if (!entry || !entry.available)
    return refuse('dubParams.provider', `Translation provider ${provider} is not available on this server.`);
  if (from !== null && !codes(entry.sources).includes(from))
    return refuse(
      'dubParams.sourceLang',
      `${provider} cannot translate from ${from}; it translates from: ${codes(entry.sources).join(', ')}.`,
    );
  if (!codes(entry.targets).includes(to))
    return refuse(
      'dubParams.targetLang',
      `${provider} cannot translate into ${to}; it translates into: ${codes(entry.targets).join(', ')}.`,
    );
  if (from === to)
    return refuse('dubParams.targetLang', `The target language is the source language (${to}).`);
  let route: TranslationRoute | null = null;
  if (entry.pairs) {
    route = entry.pairs.find((r) => r.from === from && r.to === to) ?? null;
    if (!route) {
      const into = entry.pairs.filter((r) => r.from === from).map((r) => r.to);
      return refuse(
        'dubParams.targetLang',
        `${provider} cannot translate ${from} into ${to}; from ${from} it translates into: ${into.join(', ')}.`,
      );
    }
  }
  return { provider, from, to, route };
}

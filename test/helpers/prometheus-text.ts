// A strict parser of the Prometheus text exposition format (version 0.0.4), for tests of GET /metrics:
// it refuses what a Prometheus server would refuse (bad names, bad escapes, unparsable values,
// duplicate series, a family's samples split up or before its TYPE) and checks what the format
// promises of histograms (cumulative buckets ending in +Inf, equal to _count).

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  /** The sample's own name (a histogram's `_bucket`, `_sum`, `_count` included). */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  type: MetricType;
  help: string | null;
  readonly samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES: Record<MetricType, readonly string[]> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export class PrometheusParseError extends Error {
  constructor(lineNo: number, line: string, why: string) {
    super(`line ${lineNo}: ${why}: ${JSON.stringify(line)}`);
    this.name = 'PrometheusParseError';
  }
}

/** Go's ParseFloat as Prometheus uses it: decimals, exponents, NaN and signed Inf. */
function parseValue(raw: string): number | null {
  if (/^[+-]?Inf$/i.test(raw)) return raw.startsWith('-') ? -Infinity : Infinity;
  if (/^NaN$/i.test(raw)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw)) return null;
  return Number(raw);
}

/** Reads `{a="x",b="y"}` from the start of `s`; returns the labels and the rest of the line. */
function parseLabels(
  s: string,
  fail: (why: string) => never,
): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let i = 1; // after '{'
  for (;;) {
    while (s[i] === ' ') i++;
    if (s[i] === '}') return { labels, rest: s.slice(i + 1) };
    const eq = s.indexOf('=', i);
    if (eq < 0) fail('label without =');
    const name = s.slice(i, eq).trim();
    if (!LABEL_NAME.test(name)) fail(`bad label name ${name}`);
    if (name in labels) fail(`label ${name} twice`);
    i = eq + 1;
    while (s[i] === ' ') i++;
    if (s[i] !== '"') fail('label value not quoted');
    i++;
    let value = '';
    for (;;) {
      const c = s[i];
      if (c === undefined) fail('unterminated label value');
      if (c === '"') break;
      if (c === '\\') {
        const e = s[i + 1];
        if (e === '\\') value += '\\';
        else if (e === '"') value += '"';
        else if (e === 'n') value += '\n';
        else fail(`bad escape \\${e ?? ''}`);
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    labels[name] = value;
    i++; // closing quote
    while (s[i] === ' ') i++;
    if (s[i] === ',') i++;
    else if (s[i] !== '}') fail('expected , or } after a label');
  }
}

function unescapeHelp(s: string, fail: (why: string) => never): string {
  return s.replace(/\\(.?)/g, (_m, e: string) => {
    if (e === '\\') return '\\';
    if (e === 'n') return '\n';
    return fail(`bad escape in HELP \\${e}`);
  });
}

function seriesKey(name: string, labels: Record<string, string>): string {
  return `${name}{${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(',')}}`;
}

/** The family a sample name belongs to, given the families declared so far. */
function familyOf(sample: string, families: Map<string, Family>): Family | undefined {
  for (const [name, f] of families) {
    if (SUFFIXES[f.type].some((suffix) => name + suffix === sample)) return f;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const series = new Set<string>();
  const closed = new Set<string>();
  const typed = new Set<string>();
  let current: Family | null = null;
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  else throw new PrometheusParseError(lines.length, lines.at(-1) ?? '', 'the text must end with a newline');

  lines.forEach((line, idx) => {
    const fail = (why: string): never => {
      throw new PrometheusParseError(idx + 1, line, why);
    };
    if (line.trim() === '') return;
    const switchTo = (f: Family) => {
      if (current && current.name !== f.name) closed.add(current.name);
      if (closed.has(f.name)) fail(`family ${f.name} continues after another family`);
      current = f;
    };
    if (line.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line);
      if (!m) return; // a comment
      const [, keyword, name, restRaw] = m;
      const rest = restRaw ?? '';
      if (!METRIC_NAME.test(name!)) fail(`bad metric name ${name}`);
      let f = families.get(name!);
      if (!f) {
        f = { name: name!, type: 'untyped', help: null, samples: [] };
        families.set(name!, f);
      }
      switchTo(f);
      if (keyword === 'TYPE') {
        const type = rest.trim() as MetricType;
        if (!TYPES.has(type)) fail(`unknown type ${rest}`);
        if (f.samples.length > 0) fail(`TYPE of ${name} after its samples`);
        if (typed.has(f.name)) fail(`second TYPE for ${name}`);
        typed.add(f.name);
        f.type = type;
      } else {
        if (f.help !== null) fail(`second HELP for ${name}`);
        f.help = unescapeHelp(rest, fail);
      }
      return;
    }
    const nm = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!nm) fail('no metric name');
    const name = nm![0];
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, fail));
    const parts = rest.trim().split(/\s+/);
    if (rest.length > 0 && !/^\s/.test(rest)) fail('no space before the value');
    if (parts.length < 1 || parts.length > 2 || parts[0] === '')
      fail('expected a value and an optional timestamp');
    const value = parseValue(parts[0]!);
    if (value === null) fail(`bad value ${parts[0]}`);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) fail(`bad timestamp ${parts[1]}`);
    let f = familyOf(name, families);
    if (!f) {
      f = { name, type: 'untyped', help: null, samples: [] };
      families.set(name, f);
    }
    switchTo(f);
    const key = seriesKey(name, labels);
    if (series.has(key)) fail(`series ${key} twice`);
    series.add(key);
    if (f.type === 'histogram' && name.endsWith('_bucket')) {
      if (labels.le === undefined || parseValue(labels.le) === null)
        fail('histogram bucket without a valid le');
    }
    if (f.type === 'counter' && !(value! >= 0)) fail('a counter must not be negative');
    f.samples.push({ name, labels, value: value! });
  });

  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** Buckets of each series rise with le, end at +Inf, and +Inf equals _count. */
function checkHistogram(f: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = seriesKey('', rest);
    const g = groups.get(key) ?? { buckets: [] };
    groups.set(key, g);
    if (s.name.endsWith('_bucket')) g.buckets.push([parseValue(le!)!, s.value]);
    else if (s.name.endsWith('_count')) g.count = s.value;
  }
  for (const [key, g] of groups) {
    const where = `${f.name}${key}`;
    if (g.count === undefined) throw new Error(`${where}: histogram without _count`);
    const sorted = [...g.buckets].sort((a, b) => a[0] - b[0]);
    if (sorted.at(-1)?.[0] !== Infinity) throw new Error(`${where}: histogram without a +Inf bucket`);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]![1] < sorted[i - 1]![1]) throw new Error(`${where}: buckets are not cumulative`);
    }
    if (sorted.at(-1)![1] !== g.count) throw new Error(`${where}: +Inf bucket differs from _count`);
  }
}

/**
 * The value of the one sample named `name` whose labels include `labels`; undefined when there is
 * none, an error when several match.
 */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const matches = [...families.values()]
    .flatMap((f) => f.samples)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (matches.length > 1)
    throw new Error(`${matches.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return matches[0]?.value;
}

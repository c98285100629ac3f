// The text as it will be spoken: numbers, currency and symbols spelled out. Pure, so that the request
// rules (domain/tts.ts bounds what is spoken, not only what is typed) and the synthesizers and the
// aligner (speech/text.ts) agree on the same words.

const ONES = [
  'zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven',
  'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen',
]; // prettier-ignore
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const SCALES: [number, string][] = [
  [1e12, 'trillion'],
  [1e9, 'billion'],
  [1e6, 'million'],
  [1e3, 'thousand'],
];

function below1000(n: number): string[] {
  const words: string[] = [];
  if (n >= 100) {
    words.push(ONES[Math.floor(n / 100)], 'hundred');
    n %= 100;
  }
  if (n >= 20) {
    words.push(TENS[Math.floor(n / 10)]);
    if (n % 10) words.push(ONES[n % 10]);
  } else if (n > 0 || words.length === 0) words.push(ONES[n]);
  return words;
}

/** An integer as English words ("one thousand two hundred five"); digit by digit past trillions. */
export function integerWords(digits: string): string[] {
  const n = Number(digits);
  if (!Number.isSafeInteger(n) || digits.length > 15) return [...digits].map((d) => ONES[Number(d)]);
  if (n === 0) return ['zero'];
  const words: string[] = [];
  let rest = n;
  for (const [size, name] of SCALES) {
    if (rest >= size) {
      words.push(...below1000(Math.floor(rest / size)), name);
      rest %= size;
    }
  }
  if (rest > 0) words.push(...below1000(rest));
  return words;
}

const ORDINAL: Record<string, string> = {
  one: 'first', two: 'second', three: 'third', five: 'fifth', eight: 'eighth', nine: 'ninth',
  twelve: 'twelfth',
}; // prettier-ignore

function ordinalWords(digits: string): string[] {
  const w = integerWords(digits);
  const last = w[w.length - 1];
  w[w.length - 1] = ORDINAL[last] ?? (last.endsWith('y') ? `${last.slice(0, -1)}ieth` : `${last}th`);
  return w;
}

/** Spells out one numeric token ("$5", "3.5%", "1,200", "21st"); null when it is not one. */
function numberToken(token: string): string | null {
  const m = /^(\$|£|€)?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(%|st|nd|rd|th|s)?$/i.exec(token);
  if (!m) return null;
  const [, currency, intPart, frac, suffix] = m;
  const digits = intPart.replace(/,/g, '');
  const s = suffix?.toLowerCase();
  let words =
    s && ['st', 'nd', 'rd', 'th'].includes(s) && !frac ? ordinalWords(digits) : integerWords(digits);
  if (frac) words.push('point', ...[...frac].map((d) => ONES[Number(d)]));
  if (s === 's')
    words = [...words.slice(0, -1), `${words.at(-1)}s`.replace(/ys$/, 'ies').replace(/xs$/, 'xes')];
  if (s === '%') words.push('percent');
  if (currency) {
    const one = digits === '1' && !frac;
    words.push({ $: 'dollar', '£': 'pound', '€': 'euro' }[currency]! + (one ? '' : 's'));
  }
  return words.join(' ');
}

/**
 * The text as it will be spoken: symbols and numbers spelled out, characters an engine would read
 * aloud or choke on removed, whitespace collapsed. Sentence punctuation is kept for prosody.
 */
export function speakableText(text: string): string {
  const t = text
    .normalize('NFKC')
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/[\u2013\u2014]/g, ' - ')
    .replace(/&/g, ' and ')
    .replace(/(\d)\s*%/g, '$1%')
    .replace(/\s+/g, ' ');
  const tokens = t.split(' ').map((tok) => {
    const m = /^([("'[]*)(.*?)([)"'\].,;:!?]*)$/.exec(tok)!;
    const spelled = numberToken(m[2]);
    return spelled === null ? tok : `${m[1]}${spelled}${m[3]}`;
  });
  return tokens
    .join(' ')
    .replace(/(\d+)/g, (d) => ` ${integerWords(d).join(' ')} `)
    .replace(/[^\p{L}\p{M}0-9\s.,;:!?'"()-]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

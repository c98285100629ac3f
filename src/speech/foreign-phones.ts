// Phones of the other languages the local provider speaks (espeak-ng's MBROLA output, SAMPA-like
// symbols) and what the mouth does with them. The mouth engine (engines/cpu/phoneme-mouth.ts) knows
// ARPAbet shapes, so each target-language phone is given the ARPAbet phone whose mouth is the same
// viseme: bilabials shut, labiodentals lip-on-teeth, rounded vowels narrow and round, open vowels open,
// front vowels spread. Pure: parsing, repair and mapping only, no processes.

/** One line of a .pho file: a phone and its duration in milliseconds. */
export interface PhoPhone {
  phone: string;
  durMs: number;
}

/** Parses espeak-ng's `--pho` output (phone, duration, pitch points; `;` comments). */
export function parsePho(text: string): PhoPhone[] {
  const out: PhoPhone[] = [];
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (t === '' || t.startsWith(';')) continue;
    const [phone, dur] = t.split(/\s+/);
    const durMs = Number(dur);
    if (!phone || !Number.isFinite(durMs) || durMs < 0) continue;
    out.push({ phone, durMs });
  }
  return out;
}

/**
 * Symbols espeak-ng 1.51 writes for a voice that the voice's diphone database lacks (mbrola would
 * put silence there): each is replaced by the nearest sound the voice has. Found by rendering the
 * test sentences of each language and listening to mbrola's warnings (test/integration).
 */
const SPANISH_DB: Record<string, string> = {
  S: 'tS',
  Z: 'jj',
  dZ: 'jj',
  ts: 'tS',
  dz: 'jj',
  uI: 'u',
  O: 'o',
  '@': 'e',
  y: 'i',
  h: 'x',
  z: 's',
  v: 'b',
  R: 'rr',
  '2': 'e',
  '9': 'e',
  'n^': 'J',
  'l^': 'L',
};
const REPAIRS: Record<string, Record<string, string>> = {
  es1: SPANISH_DB,
  es2: SPANISH_DB,
  pt1: { oo: 'o' },
};
/** The same, for a phone right before a pause (the Italian databases have no `j-_`: "stai"). */
const BEFORE_PAUSE: Record<string, Record<string, string>> = {
  it3: { j: 'i' },
  it4: { j: 'i' },
};

/**
 * Makes a .pho file speakable by the voice: espeak-ng marks some vowels with `/` (unstressed) or `;`
 * (palatalised) that the databases do not have, and a voice read in another language meets
 * foreign phones. Durations and pitch are kept, so the timing does not change.
 */
export function repairPho(text: string, db: string): string {
  const table = REPAIRS[db] ?? {};
  const beforePause = BEFORE_PAUSE[db] ?? {};
  const lines = text.split(/\r?\n/);
  const phoneAt = (line: string): RegExpExecArray | null =>
    line.startsWith(';') ? null : /^(\S+)(\s.*)$/.exec(line);
  const out = [...lines];
  // Walked backwards so that each phone knows the phone after it: espeak-ng puts a blank line (and
  // sometimes comments) before a pause, and the end of the file is a pause for mbrola too.
  let next = '_';
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = phoneAt(lines[i]);
    if (!m) continue;
    let p = m[1];
    if (p.length > 1) p = p.replace(/[/;]$/, '');
    p = table[p] ?? p;
    if (next === '_') p = beforePause[p] ?? p;
    out[i] = `${p}${m[2]}`;
    next = p;
  }
  return out.join('\n');
}

/** The viseme of each target-language phone, written as the ARPAbet phone with the same mouth. */
const VISEME_OF: Record<string, string> = {
  // Pauses.
  _: 'sil',
  // Lips shut, lip on teeth.
  p: 'p',
  b: 'b',
  m: 'm',
  f: 'f',
  v: 'v',
  B: 'b', // Spanish β between vowels: the lips nearly meet
  // Open and central vowels.
  a: 'aa',
  A: 'aa',
  '6': 'ah',
  '@': 'ah',
  '3': 'er',
  V: 'ah',
  // Spread (front) vowels.
  e: 'eh',
  E: 'eh',
  ee: 'eh',
  i: 'iy',
  I: 'ih',
  // Rounded vowels: narrow and round (o, u, y, ø, œ).
  o: 'ow',
  O: 'ao',
  oo: 'ao',
  u: 'uw',
  U: 'uh',
  y: 'uw',
  Y: 'uh',
  '2': 'uh',
  '9': 'uh',
  // Glides.
  w: 'w',
  j: 'y',
  jj: 'y',
  H: 'w', // French ɥ: rounded
  // Tongue consonants: the lips follow the neighbouring vowels.
  t: 't',
  d: 'd',
  n: 'n',
  l: 'l',
  L: 'l',
  J: 'n',
  N: 'ng',
  k: 'k',
  g: 'g',
  G: 'g',
  s: 's',
  s2: 's',
  z: 'z',
  T: 'th',
  D: 'dh',
  x: 'hh',
  h: 'hh',
  r: 'd', // a tap or trill: the tongue, not the lips (English r rounds)
  rr: 'd',
  R: 'g', // uvular: the back of the tongue
  S: 'sh',
  Z: 'zh',
  tS: 'ch',
  dZ: 'jh',
  ts: 's',
  dz: 'z',
  c: 'k',
  gj: 'g',
};

/**
 * The ARPAbet viseme of a phone of any language espeak-ng's MBROLA voices speak, or null when the
 * symbol is unknown. Nasal vowels (`~`, Brazilian `im`/`um`), length and stress marks and espeak-ng's
 * `/` and `;` take the shape of their base vowel.
 */
export function visemeOfPhone(raw: string): string | null {
  const p = raw.trim();
  if (p === '') return null;
  if (VISEME_OF[p]) return VISEME_OF[p];
  const base = p
    .replace(/[/;:~]+$/, '')
    .replace(/(?<=[A-Za-z])[0-9]$/, '')
    .replace(/~/g, '')
    .replace(/^(a|e|i|o|u)[mn]$/, '$1');
  if (base !== p && VISEME_OF[base]) return VISEME_OF[base];
  // A diphthong symbol (e.g. pt `6~j~`): the mouth of its first vowel.
  const first = /^(?:[aeiouEOy6@])/.exec(base)?.[0];
  return first ? (VISEME_OF[first] ?? null) : null;
}

/**
 * Which word each phone of a sentence belongs to. `wordPhones` are the phones of each word said
 * alone; the sentence's phones differ a little (sounds merge across word joins), so the two are
 * aligned by edit distance and a phone with no partner joins the word of the phone before it.
 * Pauses (`_`) belong to no word.
 */
export function assignWords(
  sentence: readonly string[],
  wordPhones: readonly string[][],
): (number | undefined)[] {
  const flat: { phone: string; word: number }[] = [];
  wordPhones.forEach((ps, w) => ps.forEach((phone) => phone !== '_' && flat.push({ phone, word: w })));
  const idx = sentence.map((p, i) => (p === '_' ? -1 : i)).filter((i) => i >= 0);
  const a = idx.map((i) => sentence[i]);
  const n = a.length;
  const m = flat.length;
  // Edit-distance table, then a walk back that records each matched or substituted pair.
  const d: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = 0; i <= n; i++) d[i][0] = i;
  for (let j = 0; j <= m; j++) d[0][j] = j;
  for (let i = 1; i <= n; i++)
    for (let j = 1; j <= m; j++)
      d[i][j] = Math.min(
        d[i - 1][j] + 1,
        d[i][j - 1] + 1,
        d[i - 1][j - 1] + (a[i - 1] === flat[j - 1].phone ? 0 : 1),
      );
  const wordOf: (number | undefined)[] = new Array<number | undefined>(n).fill(undefined);
  for (let i = n, j = m; i > 0 || j > 0;) {
    if (i > 0 && j > 0 && d[i][j] === d[i - 1][j - 1] + (a[i - 1] === flat[j - 1].phone ? 0 : 1)) {
      wordOf[i - 1] = flat[j - 1].word;
      i--;
      j--;
    } else if (i > 0 && d[i][j] === d[i - 1][j] + 1) i--;
    else j--;
  }
  // Unpaired phones join the word before them (or after, at the start); words never go backwards.
  let last = wordOf.find((w) => w !== undefined) ?? 0;
  for (let k = 0; k < n; k++) {
    const w = wordOf[k];
    if (w === undefined || w < last) wordOf[k] = last;
    else last = w;
  }
  const out: (number | undefined)[] = sentence.map(() => undefined);
  idx.forEach((i, k) => (out[i] = m === 0 ? undefined : wordOf[k]));
  return out;
}

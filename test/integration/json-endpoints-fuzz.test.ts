// The JSON endpoints that take the richest bodies, fuzzed (fast-check) through the in-process app:
// arbitrary JSON, objects with the endpoint's own keys and arbitrary values, and valid bodies with one
// value replaced, removed or added anywhere in them. The property: never a 5xx, and every refusal is
// the spec's error body with a catalogue code. No worker runs, so accepted requests stay queued.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { uploadAssetFile } from '../helpers/multipart.js';
import { ERRORS } from '../../src/domain/errors.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const RUNS = 150;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every place in a JSON value: the path of keys and indices leading to it ([] is the whole body). */
function pathsOf(value: Json, at: (string | number)[] = [], out: (string | number)[][] = []) {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...at, i], out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out);
  return out;
}

interface Mutation {
  /** Which top-level entry of the body, then which place inside it (modulo their counts). */
  entry: number;
  place: number;
  op: 'replace' | 'remove' | 'add';
  key: string;
  value: Json;
}

/**
 * The body with one change at one of its places. The place is drawn per top-level entry first, so
 * that a small entry (`edits`) is hit as often as a big one (`transcript`).
 */
function mutate(body: Json, mutation: Mutation): Json {
  // A copy: fast-check hands out the same constant ({}, []) again, and a later change may go into it.
  const m = { ...mutation, value: structuredClone(mutation.value) };
  const all = pathsOf(body);
  const entries = [...new Set(all.filter((p) => p.length > 0).map((p) => p[0]))];
  const inside = entries.length === 0 ? all : all.filter((p) => p[0] === entries[m.entry % entries.length]);
  const path = m.entry % (entries.length + 1) === entries.length ? [] : inside[m.place % inside.length];
  if (path.length === 0) return m.op === 'add' ? [body, m.value] : m.value;
  let parent = body as Record<string | number, Json>;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, Json>;
  const last = path[path.length - 1];
  const target = parent[last];
  if (m.op === 'replace') parent[last] = m.value;
  else if (m.op === 'remove') {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else if (Array.isArray(target)) target.push(m.value);
  else if (target !== null && typeof target === 'object') (target as Record<string, Json>)[m.key] = m.value;
  else parent[last] = [target, m.value];
  return body;
}

const json = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>;
/** A value put into a body: as often a plain one (null, a number, a string...) as any JSON. */
const value: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(null, true, false, 0, -1, 1.5, '', 'x', [], {}),
  json,
);

/** Bodies for one endpoint: any JSON, objects of its keys, and mutations of a valid body. */
function bodies(valid: Json, keys: string[]): fc.Arbitrary<Json> {
  const one = fc.record({
    entry: fc.nat(),
    place: fc.nat(),
    op: fc.constantFrom<Mutation['op']>('replace', 'replace', 'remove', 'add'),
    key: fc.oneof(fc.constantFrom(...keys, 'kind', 'type', 'constructor'), fc.string()),
    value,
  });
  // One to three changes, one after the other.
  const mutation = fc
    .array(one, { minLength: 1, maxLength: 3 })
    .map((ms) => ms.reduce((body, m) => mutate(body, m), structuredClone(valid)));
  const keyed = fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 8 })), json, {
    maxKeys: 8,
  }) as fc.Arbitrary<Json>;
  // Mostly mutations: arbitrary bodies are refused at their first field, mutations reach the service.
  return fc.oneof(
    { arbitrary: json, weight: 1 },
    { arbitrary: keyed, weight: 1 },
    { arbitrary: mutation, weight: 6 },
  );
}

describe(`JSON endpoints never answer 5xx to any body (${DB})`, { timeout: 600_000 }, () => {
  let t: TestServices;
  let org: TestOrg;
  let video: { id: string; url: string };
  let audio: { id: string };

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    org = await createOrgWithKey(t.services, {
      plan: 'enterprise',
      flags: ['segment_lipsync', 'section_expansion', 'tts_async'],
    });
    video = await uploadAssetFile(t.app, org.owner.headers, fixture('media/face_1.mp4'));
    audio = await uploadAssetFile(t.app, org.owner.headers, fixture('media/hello.wav'));
  });
  after(async () => {
    await t?.cleanup();
  });

  async function neverA5xx(url: string, valid: Json): Promise<void> {
    // The valid body is accepted: the mutations start from a request that goes all the way through.
    const ok = await post(url, valid);
    assert.ok(ok.statusCode >= 200 && ok.statusCode < 300, `${url} refused its valid body: ${ok.body}`);
    const keys = Object.keys(valid as object);
    await fc.assert(
      fc.asyncProperty(bodies(valid, keys), async (body) => {
        const res = await post(url, body);
        if (process.env.FUZZ_DEBUG)
          console.log(
            'DBG',
            url,
            res.statusCode,
            JSON.stringify(res.json().field ?? res.json().errorCode ?? ''),
            JSON.stringify(body).slice(0, 200),
          );
        assert.ok(res.statusCode < 500, `${url} answered ${res.statusCode}: ${res.body}`);
        if (res.statusCode >= 400) {
          const err = res.json();
          assert.equal(err.statusCode, res.statusCode, res.body);
          assert.ok(Object.hasOwn(ERRORS, err.errorCode), `not a catalogue code: ${res.body}`);
        }
      }),
      { numRuns: RUNS },
    );
  }

  const post = (url: string, body: Json) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { ...org.owner.headers, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });

  const dialogueEdit = () => ({
    transcript: {
      segments: [
        {
          id: 's1',
          words: ['we', 'can', 'talk', 'now'].map((text, i) => ({
            id: `w${i + 1}`,
            text,
            startMs: 200 + i * 400,
            endMs: 500 + i * 400,
            speakerId: 'speaker_1',
          })),
        },
      ],
    },
    edits: [
      { kind: 'change', wordId: 'w3', replacement: 'walk' },
      { kind: 'remove', wordIds: ['w1'] },
    ] as Json[],
    sourceVideoUrl: video.url,
  });

  test('POST /v2/dialogue-edits: edits that are not edit objects are 400 invalid_request', async () => {
    const cases: [Json, string][] = [
      [null, 'edits[0]'],
      [7, 'edits[0]'],
      ['remove w1', 'edits[0]'],
      [true, 'edits[0]'],
      [[], 'edits[0]'],
      [{}, 'edits[0].kind'],
      [{ kind: 'rename', wordId: 'w1' }, 'edits[0].kind'],
      [{ kind: 'change', wordId: { toString: 1 }, replacement: 'x' }, 'edits[0].wordId'],
      [{ kind: 'change', wordId: 'w1', replacement: 5 }, 'edits[0].replacement'],
      [{ kind: 'remove', wordIds: [{ valueOf: 2 }] }, 'edits[0].wordIds[0]'],
      [{ kind: 'remove', wordIds: 'w1' }, 'edits[0].wordIds'],
    ];
    for (const [edit, field] of cases) {
      const res = await post('/v2/dialogue-edits', { ...dialogueEdit(), edits: [edit] });
      assert.equal(res.statusCode, 400, `${JSON.stringify(edit)}: ${res.body}`);
      assert.equal(res.json().errorCode, 'invalid_request');
      assert.equal(res.json().field, field, JSON.stringify(edit));
    }
  });

  test('POST /v2/dialogue-edits', async () => {
    await neverA5xx('/v2/dialogue-edits', dialogueEdit());
  });

  test('POST /v2/generate', async () => {
    await neverA5xx('/v2/generate', {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video.id },
        { type: 'audio', assetId: audio.id },
      ],
      options: { sync_mode: 'cut_off' },
    });
  });

  test('POST /v2/tts', async () => {
    await neverA5xx('/v2/tts', { script: 'Hi.', voiceId: 'slt-hts', provider: 'local' });
  });
});

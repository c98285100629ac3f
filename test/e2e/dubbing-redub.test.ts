// Re-dubbing one segment end to end (docs/dubbing.md, "Re-dubbing segments"): a real `lipsync serve`
// dubs English speech into Spanish offline (given words, Apertium, the local voices), then a second
// generation based on it corrects one segment's translation. Only that segment is spoken again: its
// audio (GET …/dub/segments/{id}/audio) differs and its words are the new ones, while every other
// segment's audio is the same bytes; a timing correction places a segment anew the same way.
// Another voice for a speaker (dubParams.voices) re-speaks that speaker's segments.
// Refusals at submit give their catalogue codes. The first dub's video is fetched by URL: re-dubs
// share that stored copy, deleting a re-dub leaves it, and deleting the first dub removes it and its
// segment audio from storage while its re-dubs keep their own segment audio.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createServices } from '../../src/app/container.js';
import type { Services } from '../../src/services/index.js';
import { api, createGeneration, uploadOverHttp, waitDone } from './generations-support.js';
import { HELLO, helloVideo, startDubServer, type DubServer } from './dubbing-support.js';

const NEW_TEXT = 'Buenas tardes a todos mis amigos de la ciudad.';

describe('re-dubbing one segment', { timeout: 900_000 }, () => {
  let s: DubServer;
  let db: Services | null = null;
  // Serves the source video by URL: the dub fetches and stores its own copy, which re-dubs share.
  let media: Server;
  let mediaFile = '';

  before(async () => {
    media = createServer((_req, res) => {
      readFile(mediaFile).then(
        (b) => res.writeHead(200, { 'content-type': 'video/mp4' }).end(b),
        () => res.writeHead(404).end(),
      );
    });
    await new Promise<void>((r) => media.listen(0, '127.0.0.1', r));
    s = await startDubServer('redub-e2e');
  });
  after(async () => {
    await db?.close();
    await s?.stop();
    media?.close();
  });

  /** The sha256 of one segment's audio, fetched through its signed URL. */
  async function segmentAudio(id: string, segment: string): Promise<{ sha: string; bytes: number }> {
    const r = await api(s.server, s.org, 'GET', `/v2/generations/${id}/dub/segments/${segment}/audio`);
    assert.equal(r.status, 200, r.text);
    assert.match(String(r.headers.get('content-type')), /^text\/plain/);
    const file = await fetch(r.text);
    assert.equal(file.status, 200);
    const body = Buffer.from(await file.arrayBuffer());
    assert.equal(body.subarray(0, 4).toString('latin1'), 'RIFF', `segment ${segment} is a WAV`);
    return { sha: createHash('sha256').update(body).digest('hex'), bytes: body.length };
  }

  async function refused(body: unknown, status: number, code: string, field: string): Promise<void> {
    const r = await api(s.server, s.org, 'POST', '/v2/generate', { model: 'lipsync-2', ...(body as object) });
    assert.equal(r.status, status, r.text);
    assert.equal(r.json.errorCode, code, r.text);
    assert.equal(r.json.field, field, r.text);
  }

  test('only the corrected segment is spoken again; the others are the same bytes', async () => {
    mediaFile = await helloVideo(s);
    const video = await uploadOverHttp(s.server, s.org, mediaFile);
    const url = `http://127.0.0.1:${(media.address() as AddressInfo).port}/hello.mp4`;
    const first = await createGeneration(s.server, s.org, {
      model: 'lipsync-2',
      input: [{ type: 'video', url }],
      dubParams: { targetLang: 'es', sourceLang: 'en', transcript: HELLO },
    });
    const edit = { basedOn: first, segments: [{ id: 's2', translatedText: NEW_TEXT }] };
    // Still running: nothing to reuse yet.
    await refused({ dubParams: edit }, 409, 'generation_not_ready', 'dubParams.basedOn');
    await s.completed(first);

    db = await createServices(loadConfig({ ...s.dep.env, LOG_LEVEL: 'silent' }), createLogger('silent'));
    const firstVideo = (
      (await db.store.generations.findAny(first))!.resolvedInput.video as { blobKey: string }
    ).blobKey;
    const before = await api(s.server, s.org, 'GET', `/v2/generations/${first}/transcript`);
    assert.equal(before.status, 200, before.text);
    const ids: string[] = before.json.segments.map((x: any) => x.id);
    assert.deepEqual(ids, ['s1', 's2'], before.text);
    assert.equal(before.json.kept, undefined, 'storage keys stay on the server');

    // Refusals, each with its catalogue code and field.
    await refused(
      { dubParams: { basedOn: '00000000-0000-4000-8000-000000000000', segments: edit.segments } },
      404,
      'generation_not_found',
      'dubParams.basedOn',
    );
    await refused(
      { dubParams: { basedOn: first, segments: [{ id: 's9', translatedText: 'Hola.' }] } },
      400,
      'invalid_request',
      'dubParams.segments[0].id',
    );
    await refused(
      { dubParams: { basedOn: first, segments: [{ id: 's2', translatedText: ' ' }] } },
      400,
      'invalid_request',
      'dubParams.segments[0].translatedText',
    );
    await refused(
      { input: [{ type: 'video', assetId: video }], dubParams: edit },
      400,
      'invalid_request',
      'input',
    );
    await refused(
      { dubParams: { ...edit, targetLang: 'ca' } },
      400,
      'invalid_request',
      'dubParams.targetLang',
    );

    const second = await createGeneration(s.server, s.org, { model: 'lipsync-2', dubParams: edit });
    await s.completed(second);
    const t = await api(s.server, s.org, 'GET', `/v2/generations/${second}/transcript`);
    assert.equal(t.status, 200, t.text);
    assert.deepEqual(t.json.basedOn, { generationId: first, regenerated: ['s2'] });
    assert.equal(t.json.targetLang, 'es');
    assert.deepEqual(t.json.voices, before.json.voices, 'the same voices speak');
    const [s1, s2] = t.json.segments;
    assert.deepEqual(s1, before.json.segments[0], 'the kept segment is unchanged');
    assert.equal(s2.translatedText, NEW_TEXT);
    assert.equal(s2.sourceText, before.json.segments[1].sourceText);
    // The synthesizer's own words inside the corrected segment are the new text's.
    const heard = t.json.timeline.words
      .filter((w: any) => w.startMs >= s2.dubStartMs && w.endMs <= s2.dubEndMs + 1)
      .map((w: any) => String(w.text).toLowerCase())
      .join(' ');
    assert.match(heard, /amigos/, heard);
    assert.match(heard, /ciudad/, heard);
    const g = await api(s.server, s.org, 'GET', `/v2/generate/${second}?include=quality`);
    assert.deepEqual(g.json.quality.dub.regenerated, ['s2'], JSON.stringify(g.json.quality.dub));

    const old1 = await segmentAudio(first, 's1');
    const old2 = await segmentAudio(first, 's2');
    const new1 = await segmentAudio(second, 's1');
    const new2 = await segmentAudio(second, 's2');
    assert.equal(new1.sha, old1.sha, 'the kept segment is the same bytes');
    assert.notEqual(new2.sha, old2.sha, 'the corrected segment is new audio');
    assert.ok(
      new2.bytes > old2.bytes,
      `the longer text is longer audio (${new2.bytes} vs ${old2.bytes} bytes)`,
    );
    const unknown = await api(s.server, s.org, 'GET', `/v2/generations/${second}/dub/segments/s7/audio`);
    assert.equal(unknown.status, 404, unknown.text);

    // A timing correction: s1's span moved later; s1 spoken again there, s2's audio kept.
    const b1 = before.json.segments[0];
    const moved = { id: 's1', startMs: b1.startMs + 300, endMs: b1.endMs + 300 };
    const third = await createGeneration(s.server, s.org, {
      model: 'lipsync-2',
      dubParams: { basedOn: first, segments: [moved] },
    });
    await s.completed(third);
    const t3 = (await api(s.server, s.org, 'GET', `/v2/generations/${third}/transcript`)).json;
    assert.deepEqual(t3.basedOn.regenerated, ['s1']);
    assert.equal(t3.segments[0].dubStartMs, moved.startMs);
    assert.equal(t3.segments[0].translatedText, b1.translatedText);
    assert.equal((await segmentAudio(third, 's2')).sha, old2.sha);

    // Another voice for the speaker (dubParams.voices): that speaker's segments are spoken again by
    // it (here both: the clip has one speaker), the texts and spans as they were.
    const was = before.json.voices[0];
    assert.equal(was.speaker, 'speaker_1', before.text);
    const other = was.voiceId === 'espeak-es2' ? 'espeak-es1' : 'espeak-es2';
    await refused(
      { dubParams: { basedOn: first, voices: { speaker_9: other } } },
      400,
      'invalid_request',
      'dubParams.voices.speaker_9',
    );
    await refused(
      { dubParams: { basedOn: first, voices: { speaker_1: 'no-such-voice' } } },
      422,
      'voice_not_found',
      'dubParams.voices.speaker_1',
    );
    await refused(
      { dubParams: { basedOn: first, voices: { speaker_1: was.voiceId } } },
      400,
      'invalid_request',
      'dubParams.voices',
    );
    await refused(
      {
        input: [{ type: 'video', assetId: video }],
        dubParams: { targetLang: 'es', voiceId: other, voices: { speaker_1: other } },
      },
      400,
      'invalid_request',
      'dubParams.voices',
    );
    const fourth = await createGeneration(s.server, s.org, {
      model: 'lipsync-2',
      dubParams: { basedOn: first, voices: { speaker_1: other } },
    });
    await s.completed(fourth);
    const t4 = (await api(s.server, s.org, 'GET', `/v2/generations/${fourth}/transcript`)).json;
    assert.deepEqual(t4.basedOn.regenerated, ['s1', 's2']);
    assert.deepEqual(
      t4.voices.map((v: any) => [v.speaker, v.voiceId, v.provider]),
      [['speaker_1', other, 'local']],
    );
    assert.deepEqual(
      t4.segments.map((s: any) => [s.translatedText, s.startMs]),
      before.json.segments.map((s: any) => [s.translatedText, s.startMs]),
    );
    assert.notEqual((await segmentAudio(fourth, 's1')).sha, old1.sha, 'spoken by the other voice');
    // Deleting a re-dub leaves the earlier dub's video (fetched for the earlier dub) in place.
    assert.ok([200, 204].includes((await api(s.server, s.org, 'DELETE', `/v2/generations/${third}`)).status));
    assert.equal((await segmentAudio(first, 's2')).sha, old2.sha);
    assert.equal(await db.blobs.exists(firstVideo), true, 'the earlier dub keeps its video');

    // A generation that is not a dub cannot be re-dubbed (in any state).
    const plain = await createGeneration(s.server, s.org, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video },
        { type: 'audio', assetId: video },
      ],
    });
    await refused(
      { dubParams: { basedOn: plain, segments: edit.segments } },
      422,
      'generation_not_dubbed',
      'dubParams.basedOn',
    );

    // Deleting the first dub removes its segment audio from storage; the re-dub keeps its own copies.
    const job = (await db.store.jobs.findBySubject('generation', first))!;
    const stored = await db.blobs.list(`jobs/${job.id}/`);
    for (const s of ids)
      assert.ok(
        stored.some((k) => k.endsWith(`/dub-${s}.wav`)),
        stored.join(', '),
      );
    const del = await api(s.server, s.org, 'DELETE', `/v2/generations/${first}`);
    assert.ok(del.status === 200 || del.status === 204, del.text);
    assert.deepEqual(await db.blobs.list(`jobs/${job.id}/`), []);
    assert.equal(await db.blobs.exists(firstVideo), false, 'its fetched video went with it');
    assert.equal((await segmentAudio(second, 's1')).sha, old1.sha);
    await refused({ dubParams: edit }, 404, 'generation_not_found', 'dubParams.basedOn');
    // The video was the first dub's fetched copy: gone with it, so its re-dubs cannot be re-dubbed.
    await refused(
      { dubParams: { basedOn: second, segments: [{ id: 's1', translatedText: 'Hola.' }] } },
      422,
      'generation_input_video_inaccessible',
      'dubParams.basedOn',
    );
    await waitDone(s.server, s.org, plain, 300_000);
  });
});

// No speech process slot inside a job is an overload that passes: the error keeps its cause through
// the speech layers' wrappers (tools, providers), and articulation rethrows it so the job is retried,
// where any other failure of a speech tool still falls back to coarser lips with a note.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultSpeechProcesses, isNoProcessSlot, speechProcesses } from '../../src/processes/pool.js';
import { SpeechToolError, runTool } from '../../src/speech/tools.js';
import { SpeechProviderError } from '../../src/speech/types.js';
import { articulate, type ArticulationDeps } from '../../src/speech/articulation.js';
import type { RecognitionProvider } from '../../src/speech/recognition/types.js';

after(() => speechProcesses().configure({ size: defaultSpeechProcesses(), maxQueue: 32, maxWaitMs: 30_000 }));

/** Runs `body` while the one speech slot is held and nothing may queue. */
async function withPoolFull<T>(body: () => Promise<T>): Promise<T> {
  speechProcesses().configure({ size: 1, maxQueue: 0, maxWaitMs: 1000 });
  let release!: () => void;
  const held = speechProcesses().run(() => new Promise<void>((r) => (release = r)));
  try {
    return await body();
  } finally {
    release();
    await held;
  }
}

test('a tool run with no slot is busy, and stays recognisable through wrappers', async () => {
  const err = await withPoolFull(() =>
    runTool('true', []).then(
      () => null,
      (e: unknown) => e,
    ),
  );
  assert.ok(err instanceof SpeechToolError);
  assert.equal(err.reason, 'busy');
  assert.ok(isNoProcessSlot(err));
  assert.ok(isNoProcessSlot(new SpeechProviderError('unavailable', 'local', 'x', { cause: err })));
  assert.ok(!isNoProcessSlot(new SpeechToolError('failed', 'true', 'exit 1')));
  assert.ok(!isNoProcessSlot(new Error('plain')));
  assert.ok(!isNoProcessSlot('not an error'));
});

function deps(
  align: ArticulationDeps['align'],
  recognizer: ArticulationDeps['recognizer'] = null,
): ArticulationDeps {
  return { detectSpeech: async () => [{ startMs: 0, endMs: 1500 }], recognizer, align };
}
const input = { audioPath: '/nonexistent.wav', durationMs: 2000, transcript: 'hello there', workDir: '/tmp' };

test('articulation rethrows no-slot from alignment and recognition, falls back on other failures', async () => {
  const busy = await withPoolFull(() =>
    runTool('true', []).then(
      () => null,
      (e: unknown) => e,
    ),
  );
  await assert.rejects(
    articulate(
      input,
      deps(async () => Promise.reject(busy)),
    ),
    (e) => e === busy,
  );
  const recognizer: RecognitionProvider = {
    name: 'local',
    transcribe: async () =>
      Promise.reject(new SpeechProviderError('unavailable', 'local', 'x', { cause: busy })),
  };
  await assert.rejects(
    articulate(
      { ...input, transcript: null },
      deps(async () => Promise.reject(new Error('unused')), recognizer),
    ),
    (e) => isNoProcessSlot(e),
  );

  const fellBack = await articulate(
    input,
    deps(async () => Promise.reject(new Error('alignment: no match'))),
  );
  assert.ok(fellBack.notes.includes('the transcript could not be aligned to the audio'));
});

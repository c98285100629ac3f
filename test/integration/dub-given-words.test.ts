// A dub's given transcript (dubParams.transcript) timed on the source speech by the real aligner: words
// that do not fit the speech are the client's to correct (422, a permanent failure), not an internal
// error the job would retry.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/domain/errors.js';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { givenWords } from '../../src/pipeline/dub.js';
import { fixture } from '../helpers/paths.js';

const LONG =
  'The birch canoe slid on the smooth planks. Glue the sheet to the dark blue background. ' +
  'It is easy to tell the depth of a well. These days a chicken leg is a rare dish.';

describe('dub: the given transcript', () => {
  let root: string;
  before(async () => {
    root = await makeTempDir('dub-given-words');
  });
  after(async () => {
    await removeTempDir(root);
  });

  it('a transcript that cannot fit the speech is 422 invalid_request naming dubParams.transcript', async () => {
    const wav = join(root, 'noise.wav');
    await runFfmpeg(['-f', 'lavfi', '-i', 'anoisesrc=d=0.5:a=0.1', '-ac', '1', '-ar', '16000', wav]);
    await assert.rejects(givenWords(wav, LONG, root, new AbortController().signal), (err: unknown) => {
      assert.ok(err instanceof AppError, String(err));
      assert.equal(err.code, 'invalid_request');
      assert.equal(err.status, 422);
      assert.equal(err.extras.field, 'dubParams.transcript');
      // The decoder's own words stay in the cause (the log), not in what the client reads.
      assert.doesNotMatch(err.message, /alignment|pocketsphinx|\//);
      return true;
    });
  });

  it('a transcript that aligns is timed and kept as written (punctuation too)', async () => {
    const wav = join(root, 'hello.wav');
    await runFfmpeg(['-i', fixture('media/hello.wav'), '-ac', '1', '-ar', '16000', wav]);
    const words = await givenWords(wav, 'Hello, world!', root, new AbortController().signal);
    assert.deepEqual(
      words.map((w) => w.text),
      ['Hello,', 'world!'],
    );
    assert.ok(words[0].startMs < words[1].startMs && words[1].startMs < words[1].endMs);
  });
});

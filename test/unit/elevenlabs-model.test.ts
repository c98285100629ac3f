// Which ElevenLabs model speaks a known language, and when language_code goes with it (docs/dubbing.md).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { elevenLabsModelFor } from '../../src/speech/elevenlabs-provider.js';

test('an English-only model gives way to the multilingual one for another language', () => {
  for (const m of ['eleven_monolingual_v1', 'eleven_turbo_v2', 'eleven_flash_v2'])
    assert.deepEqual(elevenLabsModelFor(m, 'es'), { modelId: 'eleven_multilingual_v2', languageCode: null });
  assert.deepEqual(elevenLabsModelFor('eleven_flash_v2', 'en'), {
    modelId: 'eleven_flash_v2',
    languageCode: null,
  });
  assert.deepEqual(elevenLabsModelFor('eleven_flash_v2', undefined), {
    modelId: 'eleven_flash_v2',
    languageCode: null,
  });
});

test('the v2.5 models get language_code (ISO 639-1); the others none', () => {
  assert.deepEqual(elevenLabsModelFor('eleven_turbo_v2_5', 'pt-br'), {
    modelId: 'eleven_turbo_v2_5',
    languageCode: 'pt',
  });
  assert.deepEqual(elevenLabsModelFor('eleven_flash_v2_5', 'es'), {
    modelId: 'eleven_flash_v2_5',
    languageCode: 'es',
  });
  assert.deepEqual(elevenLabsModelFor('eleven_multilingual_v2', 'es'), {
    modelId: 'eleven_multilingual_v2',
    languageCode: null,
  });
  assert.deepEqual(elevenLabsModelFor('eleven_turbo_v2_5', undefined), {
    modelId: 'eleven_turbo_v2_5',
    languageCode: null,
  });
});

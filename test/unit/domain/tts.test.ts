// The script rules of a text-to-speech request (domain/tts.ts): the typed length and the length once
// numbers are spelled out are both bounded, for a TTS body and for a generation's text input alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  normaliseTtsRequest,
  SCRIPT_MAX_CHARACTERS,
  SPOKEN_MAX_CHARACTERS,
} from '../../../src/domain/tts.js';
import { speakableText } from '../../../src/domain/spoken-text.js';
import { refusal } from '../../helpers/refusal.js';

test('5,000 digits fit the typed limit but not the spoken one: a clear invalid_request on script', () => {
  const digits = '7'.repeat(SCRIPT_MAX_CHARACTERS);
  assert.ok(speakableText(digits).length > SPOKEN_MAX_CHARACTERS);
  const err = refusal(() => normaliseTtsRequest({ script: digits, voiceId: 'slt-hts' }));
  assert.equal(err.code, 'invalid_request');
  assert.equal(err.status, 400);
  assert.equal(err.extras.field, 'script');
  assert.match(err.message, /spelled out/);
  assert.match(err.message, new RegExp(`at most ${SPOKEN_MAX_CHARACTERS}`));
  assert.match(err.suggestion, /long numbers/);

  // The same rule for a generation's text input, with the field as the client wrote it.
  const inInput = refusal(() =>
    normaliseTtsRequest(
      { script: `Call 555 ${'1234 '.repeat(900)}`, voiceId: 'slt-hts', name: 'local' },
      { prefix: 'input[1].provider.', providerField: 'name' },
    ),
  );
  assert.equal(inInput.extras.field, 'input[1].provider.script');
});

test('ordinary text with numbers at the typed limit is accepted', () => {
  const sentence = 'In 2024 we sold 1,250 units for $3.50 each, 12% more than before. ';
  const script = sentence.repeat(Math.floor(SCRIPT_MAX_CHARACTERS / sentence.length)).trim();
  assert.ok(script.length <= SCRIPT_MAX_CHARACTERS);
  assert.ok(speakableText(script).length > SCRIPT_MAX_CHARACTERS, 'the spoken text is longer than typed');
  assert.equal(normaliseTtsRequest({ script, voiceId: 'slt-hts' }).script, script);
});

test('the typed limit is still checked first', () => {
  const err = refusal(() =>
    normaliseTtsRequest({ script: 'a'.repeat(SCRIPT_MAX_CHARACTERS + 1), voiceId: 'v' }),
  );
  assert.match(err.message, new RegExp(`at most ${SCRIPT_MAX_CHARACTERS} characters`));
});

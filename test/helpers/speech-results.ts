// Checks shared by the speech provider tests: what a good synthesis result is, and how a provider
// failure must look (a SpeechProviderError of the right reason that names no key).
import assert from 'node:assert/strict';
import { probeMedia } from '../../src/media/probe.js';
import { SpeechProviderError, type SpeechFailure, type SynthesisResult } from '../../src/speech/types.js';
import type { FakeMode } from './fake-speech-servers.js';

export const SCRIPT = 'Hello there, this is a quick test of the speech service.';
export const SERVER_KEY = 'sk-server-5f2a9c1e7b3d4a60';
export const ORG_KEY = 'org-key-8e41b7d20c9f3a15';
export const scriptWords = (text: string) => (text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []).join(' ');

/** A mono 16-bit WAV whose duration is what the result says, with the script's words in order. */
export async function assertGoodResult(r: SynthesisResult, text: string): Promise<void> {
  const probe = await probeMedia(r.audioPath);
  assert.equal(probe.format, 'wav');
  assert.equal(probe.audio?.codec, 'pcm_s16le');
  assert.equal(probe.audio?.channels, 1);
  assert.equal(probe.audio?.sampleRate, r.sampleRate);
  assert.ok(Math.abs((probe.durationSeconds ?? 0) * 1000 - r.durationMs) <= 20, `${r.durationMs} ms`);
  assert.ok(r.durationMs > 1500, `${r.durationMs} ms of speech for ${text.length} characters`);
  assert.equal(scriptWords(r.timeline.words.map((w) => w.text).join(' ')), scriptWords(text));
  let at = 0;
  for (const w of r.timeline.words) {
    assert.ok(w.startMs >= at && w.endMs > w.startMs && w.endMs <= r.durationMs + 20, JSON.stringify(w));
    at = w.startMs;
  }
  const spoken = r.timeline.phonemes.filter((p) => p.phone !== 'sil');
  assert.ok(spoken.length >= r.timeline.words.length, 'at least one phoneme per word');
  assert.ok(spoken.every((p) => p.word !== undefined && p.word < r.timeline.words.length));
}

/** Rejects with a SpeechProviderError of `reason` that names no key (message and detail). */
export function failsWith(reason: SpeechFailure, ...keys: string[]) {
  return (e: unknown) => {
    assert.ok(e instanceof SpeechProviderError, String(e));
    assert.equal(e.reason, reason, e.message);
    for (const k of [SERVER_KEY, ORG_KEY, ...keys]) {
      assert.ok(!e.message.includes(k) && !(e.detail ?? '').includes(k), `the key leaked: ${e.message}`);
    }
    return true;
  };
}

// Failure modes every provider must map the same way (the services' own answers for each).
export const MODES: [FakeMode, SpeechFailure][] = [
  ['invalid_key', 'key_invalid'],
  ['quota', 'quota'],
  ['payment_required', 'quota'],
  ['rate_limited', 'unavailable'],
  ['server_error', 'unavailable'],
  ['overloaded', 'unavailable'],
  ['garbage', 'unavailable'],
  ['unknown_voice', 'voice_not_found'],
  ['bad_request', 'rejected'],
];

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertNoteRoom,
  MAX_NOTES_PER_GENERATION,
  noteAuthor,
  noteMoment,
  noteText,
} from '../../../src/domain/notes.js';
import { AppError } from '../../../src/domain/errors.js';

const refused = (code: string, field?: string) => (e: unknown) =>
  e instanceof AppError && e.code === code && (field === undefined || e.extras.field === field);

test('a moment lies within the output when its duration is known, any moment from 0 before', () => {
  assert.equal(noteMoment(0, 5), 0);
  assert.equal(noteMoment(5000, 5), 5000);
  assert.equal(noteMoment(5000, 4.9996), 5000); // the duration rounds to whole milliseconds
  assert.equal(noteMoment(5050, 5), 5000); // a player's last frame a little past the stored length
  assert.throws(() => noteMoment(5101, 5), refused('invalid_request', 'atMs'));
  assert.throws(() => noteMoment(-1, null), refused('invalid_request', 'atMs'));
  assert.throws(() => noteMoment(0.5, null), refused('invalid_request', 'atMs'));
  assert.equal(noteMoment(90_000, null), 90_000);
});

test('a text is trimmed and must keep 1 to 2000 characters', () => {
  assert.equal(noteText('  late lips \n'), 'late lips');
  assert.equal(noteText(`${'x'.repeat(2000)}  `).length, 2000);
  assert.throws(() => noteText(' \t '), refused('invalid_request', 'text'));
  assert.throws(() => noteText('x'.repeat(2001)), refused('invalid_request', 'text'));
});

test('the note after the last allowed one is refused', () => {
  assert.doesNotThrow(() => assertNoteRoom(MAX_NOTES_PER_GENERATION - 1));
  assert.throws(() => assertNoteRoom(MAX_NOTES_PER_GENERATION), refused('note_limit_reached'));
});

test("the author is the user's email, else the key's name", () => {
  assert.equal(noteAuthor({ email: 'ann@example.com', keyName: null }), 'ann@example.com');
  assert.equal(noteAuthor({ email: null, keyName: 'CI' }), 'CI');
  assert.equal(noteAuthor({ email: null, keyName: '' }), 'API key');
});

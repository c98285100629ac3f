// Review notes on a generation's output (our extension, docs/generations.md#notes): list, add, edit,
// resolve and delete. A generation of another organization, or a deleted one, is generation_not_found.
import { randomUUID } from 'node:crypto';
import type { Store } from '../store/index.js';
import type { GenerationRecord } from '../store/generations.js';
import type { NoteRecord } from '../store/notes.js';
import type { AuthContext } from './api-keys.js';
import { AppError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import { assertNoteRoom, noteAuthor, noteMoment, noteText } from '../domain/notes.js';

export function noteView(n: NoteRecord) {
  return {
    id: n.id,
    generationId: n.generationId,
    atMs: n.atMs,
    text: n.text,
    resolved: n.resolved,
    author: n.author,
    createdAt: n.createdAt,
    updatedAt: n.updatedAt,
  };
}

export interface NewNote {
  atMs: number;
  text: string;
  resolved?: boolean;
}

export class NoteService {
  constructor(private readonly store: Store) {}

  private async generation(organizationId: string, id: string): Promise<GenerationRecord> {
    const g = isUuid(id) ? await this.store.generations.find(id, organizationId) : null;
    if (!g) throw new AppError('generation_not_found', { field: 'id' });
    return g;
  }

  async list(organizationId: string, generationId: string): Promise<NoteRecord[]> {
    await this.generation(organizationId, generationId);
    return this.store.notes.list(organizationId, generationId);
  }

  async add(auth: AuthContext, generationId: string, body: NewNote): Promise<NoteRecord> {
    const organizationId = auth.organization.id;
    const g = await this.generation(organizationId, generationId);
    const now = new Date().toISOString();
    const note: NoteRecord = {
      id: randomUUID(),
      organizationId,
      generationId: g.id,
      atMs: noteMoment(body.atMs, g.outputDuration),
      text: noteText(body.text),
      resolved: body.resolved ?? false,
      author: noteAuthor({ email: auth.session?.email ?? null, keyName: auth.key?.name ?? null }),
      createdAt: now,
      updatedAt: now,
    };
    // Deleted between the read above and the insert: as if it had never been found.
    if (!(await this.store.notes.insertWithinLimit(note, assertNoteRoom)))
      throw new AppError('generation_not_found', { field: 'id' });
    return note;
  }

  async update(
    organizationId: string,
    generationId: string,
    noteId: string,
    patch: { atMs?: number; text?: string; resolved?: boolean },
  ): Promise<NoteRecord> {
    const g = await this.generation(organizationId, generationId);
    const changes = {
      ...(patch.atMs !== undefined ? { atMs: noteMoment(patch.atMs, g.outputDuration) } : {}),
      ...(patch.text !== undefined ? { text: noteText(patch.text) } : {}),
      ...(patch.resolved !== undefined ? { resolved: patch.resolved } : {}),
    };
    const n = isUuid(noteId)
      ? await this.store.notes.update(organizationId, g.id, noteId, changes, new Date().toISOString())
      : null;
    if (!n) throw new AppError('note_not_found', { field: 'noteId' });
    return n;
  }

  async delete(organizationId: string, generationId: string, noteId: string): Promise<NoteRecord> {
    const g = await this.generation(organizationId, generationId);
    const n = isUuid(noteId) ? await this.store.notes.find(organizationId, g.id, noteId) : null;
    if (!n || !(await this.store.notes.delete(organizationId, g.id, n.id)))
      throw new AppError('note_not_found', { field: 'noteId' });
    return n;
  }
}

// What the dub read tests (transcript, subtitles, segment audio, re-dub refusals) share: an
// organization and another on a real database, generations written straight to the store by name,
// and the spec's error body.
import assert from 'node:assert/strict';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';
import type { GenerationRecord } from '../../src/store/generations.js';

/** What a dub asked for, as the admission stores it (a dub without it reads as not dubbed). */
export const dubAsked = {
  resolvedInput: {
    request: {
      dub: { targetLang: 'es', sourceLang: null, provider: 'local', voiceId: null, transcript: null },
    },
  },
};

export interface DubStore {
  readonly t: TestServices;
  readonly org: TestOrg;
  /** Another organization: its generations are not `org`'s to read. */
  readonly other: TestOrg;
  /** The ids of the generations put, by name. */
  readonly ids: Record<string, string>;
  /** Writes a generation as a worker or the admission leaves it, under `name`. */
  put(name: string, g: GenerationRecord): Promise<void>;
  /** A GET as `who` (org by default; null: signed out). */
  readonly get: ReturnType<typeof getAs>;
}

const getAs =
  (t: TestServices, org: TestOrg) =>
  (url: string, who: TestOrg | null = org) =>
    t.app.inject({ method: 'GET', url, headers: who ? who.owner.headers : {} });

export async function dubStore(): Promise<DubStore> {
  const t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
  const org = await createOrgWithKey(t.services);
  const other = await createOrgWithKey(t.services);
  const ids: Record<string, string> = {};
  return {
    t,
    org,
    other,
    ids,
    async put(name, g) {
      await t.services.store.generations.insert(g);
      ids[name] = g.id;
    },
    get: getAs(t, org),
  };
}

/** The spec's error body: this status and code, a message and a suggestion, and the field if given. */
export function assertError(
  res: { statusCode: number; body: string },
  status: number,
  code: string,
  field?: string,
): void {
  assert.equal(res.statusCode, status, res.body);
  const b = JSON.parse(res.body) as Record<string, unknown>;
  assert.equal(b.statusCode, status, res.body);
  assert.equal(b.errorCode, code, res.body);
  assert.equal(typeof b.message, 'string');
  assert.equal(typeof b.suggestion, 'string');
  if (field !== undefined) assert.equal(b.field, field, res.body);
}

// GET /v2/assets: the official client's list shape ({ items, nextCursor, totalCount }), filters,
// every sortBy, and cursors that walk the whole list without gaps or repeats.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { encodeForm, type FormPart } from '../helpers/multipart.js';
import { ASSET_SORTS } from '../../src/domain/assets.js';

interface AssetJson {
  id: string;
  name: string;
  type: string;
  size: number;
  createdAt: string;
  durationSeconds?: number;
  projectId: string | null;
}

describe(`asset list (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;
  let scratch: string;
  let projectId: string;
  const uploaded: AssetJson[] = [];

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    org = await createOrgWithKey(t.services);
    projectId = (await t.services.projects.create(org.organization.id, 'Project P')).id;
    scratch = await mkdtemp(join(tmpdir(), 'lipsync-assets-'));
    const png = join(scratch, 'red.png');
    const r = spawnSync('ffmpeg', [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'color=red:s=32x32',
      '-frames:v',
      '1',
      png,
    ]);
    assert.equal(r.status, 0, String(r.stderr));
    const uploads: FormPart[][] = [
      [
        { name: 'file', file: fixture('media/face_1.mp4') },
        { name: 'name', value: 'Face One' },
      ],
      [
        { name: 'file', file: fixture('media/face_2.mp4') },
        { name: 'name', value: 'face two' },
      ],
      [
        { name: 'file', file: fixture('media/audio_1.wav') },
        { name: 'name', value: 'Speech_A' },
      ],
      [
        { name: 'file', file: fixture('media/hello.wav') },
        { name: 'name', value: 'hello' },
        { name: 'projectId', value: projectId },
      ],
      [
        { name: 'file', file: png },
        { name: 'name', value: 'Red 100%' },
      ],
    ];
    for (const parts of uploads) {
      const { payload, headers } = await encodeForm(parts);
      const res = await t.app.inject({
        method: 'POST',
        url: '/v2/assets/upload',
        headers: { ...org.owner.headers, ...headers },
        payload,
      });
      assert.equal(res.statusCode, 201, res.body);
      uploaded.push(res.json());
      await new Promise((r) => setTimeout(r, 5)); // distinct createdAt values
    }
  });
  after(async () => {
    await t.cleanup();
    await rm(scratch, { recursive: true, force: true });
  });

  const list = async (query: string, status = 200) => {
    const res = await t.app.inject({ method: 'GET', url: `/v2/assets${query}`, headers: org.owner.headers });
    assert.equal(res.statusCode, status, res.body);
    return res.json();
  };
  const names = (items: AssetJson[]) => items.map((a) => a.name);

  test('the default list: newest first, totalCount, no nextCursor on the last page', async () => {
    const body = await list('');
    assert.deepEqual(Object.keys(body).sort(), ['items', 'totalCount']);
    assert.equal(body.totalCount, 5);
    assert.deepEqual(names(body.items), names([...uploaded].reverse()));
    assert.ok(body.items.every((a: { url: string }) => a.url.includes('/v2/files/assets/')));
  });

  test('types: a comma list, a JSON array (as the official client sends it), repeated values', async () => {
    assert.deepEqual(names((await list('?types=AUDIO')).items).sort(), ['Speech_A', 'hello']);
    assert.equal((await list('?types=VIDEO,IMAGE')).totalCount, 3);
    assert.equal((await list(`?types=${encodeURIComponent('["VIDEO"]')}`)).totalCount, 2);
    assert.equal((await list('?types=audio&types=IMAGE')).totalCount, 3);
    assert.equal((await list('?types=FOO', 400)).field, 'types');
  });

  test('searchQuery: case-insensitive "contains", wildcards taken literally', async () => {
    assert.deepEqual(names((await list('?searchQuery=FACE')).items).sort(), ['Face One', 'face two']);
    assert.deepEqual(names((await list('?searchQuery=100%25')).items), ['Red 100%']);
    assert.deepEqual(names((await list('?searchQuery=_')).items), ['Speech_A']);
    assert.equal((await list('?searchQuery=zzz')).totalCount, 0);
  });

  test('projectId filters; a project of no one is 404 project_not_found', async () => {
    assert.deepEqual(names((await list(`?projectId=${projectId}`)).items), ['hello']);
    const missing = await list('?projectId=00000000-0000-4000-8000-000000000000', 404);
    assert.equal(missing.errorCode, 'project_not_found');
  });

  const expectedOrder = (sort: string): string[] => {
    const desc = sort.endsWith('Desc');
    const key = (a: AssetJson): string | number => {
      if (sort.startsWith('date')) return a.createdAt;
      if (sort.startsWith('name')) return a.name.toLowerCase();
      if (sort.startsWith('duration')) return a.durationSeconds ?? -1;
      if (sort.startsWith('size')) return a.size;
      return a.type;
    };
    const sorted = [...uploaded].sort((x, y) => {
      const kx = key(x);
      const ky = key(y);
      const c = kx < ky ? -1 : kx > ky ? 1 : x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
      return desc ? -c : c;
    });
    return sorted.map((a) => a.id);
  };

  for (const sort of ASSET_SORTS) {
    test(`sortBy=${sort} pages of 2 walk the whole list in order`, async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const q = `?sortBy=${sort}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const body = await list(q);
        assert.equal(body.totalCount, 5);
        assert.ok(body.items.length <= 2);
        seen.push(...body.items.map((a: AssetJson) => a.id));
        cursor = body.nextCursor;
        pages++;
      } while (cursor && pages < 10);
      assert.equal(pages, 3);
      assert.deepEqual(seen, expectedOrder(sort));
    });
  }

  test('bad paging input is 400: a cursor of another sort, a forged cursor, limit out of range', async () => {
    const first = await list('?sortBy=nameAsc&limit=1');
    assert.equal((await list(`?sortBy=sizeAsc&cursor=${first.nextCursor}`, 400)).field, 'cursor');
    assert.equal((await list('?cursor=bm90LWpzb24', 400)).field, 'cursor');
    await list('?limit=0', 400);
    await list('?limit=101', 400);
    await list('?sortBy=random', 400);
  });
});

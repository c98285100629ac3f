// The ISO BMFF reader (src/media/iso-probe.ts) parses untrusted uploads, so it is fuzzed (fast-check):
// box trees taken from a real fixture's header and then mutated (bytes, box sizes, boxes dropped,
// repeated, moved, the file cut short), trees of random boxes, and random bytes. Whatever it is
// given it settles with its documented answers only: null (left to ffprobe) or a probe whose fields
// are sane, never an exception; it reads only inside the file (its reads of a cut file fail as
// Unexpected, i.e. null), and every run ends (a loop that never ends would hang this file).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { fixture } from '../helpers/paths.js';
import { readIsoProbe } from '../../src/media/iso-probe.js';
import type { MediaProbe } from '../../src/media/probe.js';

/** A box: a leaf (its content) or a container (a fixed prefix, then child boxes). */
interface BoxNode {
  type: string;
  prefix: Buffer;
  children: BoxNode[] | null;
}

/** Containers of the boxes the reader follows, with the bytes before their first child. */
const CONTAINERS: Record<string, number> = {
  moov: 0,
  trak: 0,
  mdia: 0,
  minf: 0,
  stbl: 0,
  edts: 0,
  dinf: 0,
  stsd: 8,
  avc1: 78,
  avc3: 78,
  mp4a: 28,
};

function parseBoxes(buf: Buffer): BoxNode[] | null {
  const out: BoxNode[] = [];
  let p = 0;
  while (p < buf.length) {
    if (p + 8 > buf.length) return null;
    const size = buf.readUInt32BE(p);
    if (size < 8 || p + size > buf.length) return null;
    const type = buf.toString('latin1', p + 4, p + 8);
    const body = buf.subarray(p + 8, p + size);
    const prefixLength = CONTAINERS[type];
    const children = prefixLength !== undefined ? parseBoxes(body.subarray(prefixLength)) : null;
    out.push(
      children
        ? { type, prefix: Buffer.from(body.subarray(0, prefixLength)), children }
        : { type, prefix: Buffer.from(body), children: null },
    );
    p += size;
  }
  return out;
}

function serialize(nodes: readonly BoxNode[]): Buffer {
  return Buffer.concat(
    nodes.map((n) => {
      const body = Buffer.concat([n.prefix, ...(n.children ? [serialize(n.children)] : [])]);
      const head = Buffer.alloc(8);
      head.writeUInt32BE(8 + body.length, 0);
      head.write(n.type, 4, 'latin1');
      return Buffer.concat([head, body]);
    }),
  );
}

/** The file's top-level ftyp and moov (the reader reads no sample data). */
async function headerTree(path: string): Promise<BoxNode[]> {
  const file = await readFile(path);
  const top: BoxNode[] = [];
  let p = 0;
  while (p + 8 <= file.length) {
    let size = file.readUInt32BE(p);
    let header = 8;
    if (size === 1) {
      size = Number(file.readBigUInt64BE(p + 8));
      header = 16;
    } else if (size === 0) size = file.length - p;
    const type = file.toString('latin1', p + 4, p + 8);
    if (type === 'ftyp' || type === 'moov') {
      const wrapped = Buffer.concat([Buffer.alloc(8), file.subarray(p + header, p + size)]);
      wrapped.writeUInt32BE(size - header + 8, 0);
      wrapped.write(type, 4, 'latin1');
      const [node] = parseBoxes(wrapped) ?? [];
      assert.ok(node, `${type} of ${path} parses`);
      top.push(node);
    }
    p += size;
  }
  return top;
}

/** Every node of a tree with the list that holds it (for tree mutations). */
function listsOf(nodes: BoxNode[], into: BoxNode[][] = []): BoxNode[][] {
  into.push(nodes);
  for (const n of nodes) if (n.children) listsOf(n.children, into);
  return into;
}

function cloneTree(nodes: readonly BoxNode[]): BoxNode[] {
  return nodes.map((n) => ({
    type: n.type,
    prefix: Buffer.from(n.prefix),
    children: n.children ? cloneTree(n.children) : null,
  }));
}

/** Offsets of every box header in a serialized tree (where its size field is). */
function headerOffsets(buf: Buffer, start = 0, end = buf.length, into: number[] = []): number[] {
  let p = start;
  while (p + 8 <= end) {
    const size = buf.readUInt32BE(p);
    if (size < 8 || p + size > end) break;
    into.push(p);
    const prefixLength = CONTAINERS[buf.toString('latin1', p + 4, p + 8)];
    if (prefixLength !== undefined) headerOffsets(buf, p + 8 + prefixLength, p + size, into);
    p += size;
  }
  return into;
}

type TreeEdit =
  | { op: 'drop'; list: number; at: number }
  | { op: 'repeat'; list: number; at: number }
  | { op: 'swap'; list: number; at: number; with: number }
  | { op: 'retype'; list: number; at: number; type: string }
  | { op: 'trim'; list: number; at: number; keep: number };

const BOX_TYPES = ['ftyp', 'moov', 'mvhd', 'trak', 'tkhd', 'mdia', 'mdhd', 'hdlr', 'minf', 'stbl'].concat([
  'stsd',
  'stts',
  'stsz',
  'avc1',
  'mp4a',
  'esds',
  'wave',
  'mdat',
  'free',
  'udta',
]);

const treeEdit: fc.Arbitrary<TreeEdit> = fc.oneof(
  fc.record({ op: fc.constant('drop' as const), list: fc.nat(), at: fc.nat() }),
  fc.record({ op: fc.constant('repeat' as const), list: fc.nat(), at: fc.nat() }),
  fc.record({ op: fc.constant('swap' as const), list: fc.nat(), at: fc.nat(), with: fc.nat() }),
  fc.record({ op: fc.constant('trim' as const), list: fc.nat(), at: fc.nat(), keep: fc.nat() }),
  fc.record({
    op: fc.constant('retype' as const),
    list: fc.nat(),
    at: fc.nat(),
    type: fc.constantFrom(...BOX_TYPES),
  }),
);

function applyEdit(tree: BoxNode[], e: TreeEdit): void {
  const lists = listsOf(tree).filter((l) => l.length > 0);
  if (lists.length === 0) return;
  const list = lists[e.list % lists.length]!;
  const at = e.at % list.length;
  if (e.op === 'drop') list.splice(at, 1);
  else if (e.op === 'repeat') list.splice(at, 0, ...cloneTree([list[at]!]));
  else if (e.op === 'swap') {
    const other = e.with % list.length;
    [list[at], list[other]] = [list[other]!, list[at]!];
  } else if (e.op === 'trim') {
    // A box's own bytes cut short: its fields then run past its end.
    const node = list[at]!;
    node.prefix = node.prefix.subarray(0, e.keep % (node.prefix.length + 1));
  } else list[at]!.type = e.type;
}

/** Sizes a box header may be given: the special ones (0: to the end, 1: 64-bit), or anything. */
const sizeValue = fc.oneof(
  fc.constantFrom(0, 1, 7, 8, 9, 16, 0x7fffffff, 0xffffffff),
  fc.nat({ max: 0xffffffff }),
);

/** A new size for a box: one of sizeValue, or its own off by a little. */
const sizeChange = fc.oneof(
  sizeValue.map((size) => ({ size })),
  fc.integer({ min: -16, max: 16 }).map((delta) => ({ delta })),
);

const mutation = fc.record({
  edits: fc.array(treeEdit, { maxLength: 4 }),
  bytes: fc.array(fc.record({ at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }), { maxLength: 8 }),
  sizes: fc.array(fc.record({ box: fc.nat(), change: sizeChange }), { maxLength: 3 }),
  cut: fc.option(fc.nat(), { nil: undefined }),
});

/** A moov of random boxes (of the types the reader follows) with random content. */
const randomMoov: fc.Arbitrary<BoxNode[]> = fc
  .letrec<{ nodes: BoxNode[]; node: BoxNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.record({
        type: fc.constantFrom(...BOX_TYPES),
        prefix: fc.uint8Array({ maxLength: 48 }).map((a) => Buffer.from(a)),
        children: fc.constant(null),
      }),
      fc.record({
        type: fc.constantFrom(...Object.keys(CONTAINERS)),
        prefix: fc.constant(Buffer.alloc(0)),
        children: tie('nodes'),
      }),
    ),
    nodes: fc.array(tie('node'), { maxLength: 4 }),
  }))
  .nodes.map((children) => [{ type: 'moov', prefix: Buffer.alloc(0), children }]);

/** What the reader may answer: null, or a probe with sane fields for a file of this size. */
function assertSane(probe: MediaProbe | null, size: number): void {
  if (probe === null) return;
  assert.equal(probe.kind, 'VIDEO');
  assert.equal(probe.sizeBytes, size);
  assert.ok(probe.format === 'mp4' || probe.format === 'mov');
  assert.ok(Number.isFinite(probe.durationSeconds) && (probe.durationSeconds ?? 0) > 0);
  const v = probe.video;
  assert.ok(v && v.codec === 'h264');
  assert.ok(Number.isInteger(v.width) && v.width > 0 && Number.isInteger(v.height) && v.height > 0);
  assert.ok(v.frameCount === null || (Number.isInteger(v.frameCount) && v.frameCount >= 0));
  assert.ok(v.fps === null || (Number.isFinite(v.fps) && v.fps > 0));
  if (probe.audio) {
    assert.equal(probe.audio.codec, 'aac');
    assert.ok(Number.isInteger(probe.audio.sampleRate) && Number.isInteger(probe.audio.channels));
  }
}

describe('ISO BMFF probe, fuzzed', { timeout: 300_000 }, () => {
  let dir: string;
  let n = 0;
  let original: BoxNode[];
  let originalProbe: MediaProbe | null;

  /** Writes the bytes to a file of their own and reads it; the answer must be sane. */
  async function probeBytes(bytes: Buffer): Promise<MediaProbe | null> {
    const path = join(dir, `case-${n++}.mp4`);
    await writeFile(path, bytes);
    try {
      const probe = await readIsoProbe(path);
      assertSane(probe, bytes.length);
      return probe;
    } finally {
      await rm(path, { force: true });
    }
  }

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-iso-fuzz-'));
    original = await headerTree(fixture('media/face_1.mp4'));
    originalProbe = await readIsoProbe(fixture('media/face_1.mp4'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('the fixture header, taken apart and put back, reads as the whole file does', async () => {
    assert.ok(originalProbe, 'the fixture is read from its boxes');
    const bytes = serialize(original);
    const probe = await probeBytes(bytes);
    assert.deepEqual(probe, { ...originalProbe, sizeBytes: bytes.length });
  });

  test('a mutated fixture header: null or a sane probe, never an exception', async () => {
    let read = 0;
    await fc.assert(
      fc.asyncProperty(mutation, async (m) => {
        const tree = cloneTree(original);
        for (const e of m.edits) applyEdit(tree, e);
        let bytes = serialize(tree);
        const offsets = headerOffsets(bytes);
        for (const s of m.sizes) {
          if (offsets.length === 0) break;
          const at = offsets[s.box % offsets.length]!;
          const size = 'size' in s.change ? s.change.size : bytes.readUInt32BE(at) + s.change.delta;
          bytes.writeUInt32BE(Math.max(0, Math.min(0xffffffff, size)), at);
        }
        for (const b of m.bytes) if (bytes.length > 0) bytes[b.at % bytes.length] = b.value;
        if (m.cut !== undefined) bytes = bytes.subarray(0, m.cut % (bytes.length + 1));
        if (await probeBytes(bytes)) read++;
      }),
      { numRuns: 400 },
    );
    // The mutations are not all refused at the first box: some still read as a video.
    assert.ok(read > 0, 'some mutated headers still read');
  });

  test('a moov of random boxes, behind a real ftyp or not: null or a sane probe', async () => {
    const ftyp = serialize(original.filter((b) => b.type === 'ftyp'));
    await fc.assert(
      fc.asyncProperty(randomMoov, fc.boolean(), async (tree, withFtyp) => {
        const body = serialize(tree);
        await probeBytes(withFtyp ? Buffer.concat([ftyp, body]) : body);
      }),
      { numRuns: 300 },
    );
  });

  test('random bytes, alone or after a box header: null or a sane probe', async () => {
    const head = (type: string, size: number) => {
      const h = Buffer.alloc(8);
      h.writeUInt32BE(size >>> 0, 0);
      h.write(type, 4, 'latin1');
      return h;
    };
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 512 }),
        fc.option(fc.record({ type: fc.constantFrom('ftyp', 'moov', 'mdat'), size: sizeValue }), {
          nil: undefined,
        }),
        async (random, box) => {
          const bytes = Buffer.from(random);
          await probeBytes(box ? Buffer.concat([head(box.type, box.size), bytes]) : bytes);
        },
      ),
      { numRuns: 300 },
    );
  });
});

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MODELS } from '../../src/domain/models.js';
import { DEFAULT_ENGINE, EngineRegistry } from '../../src/engines/registry.js';

describe('engine registry', () => {
  test('every model runs the cpu engine by default', () => {
    assert.equal(DEFAULT_ENGINE, 'cpu');
    const reg = new EngineRegistry();
    for (const m of MODELS) {
      assert.equal(reg.for(m.id).engine.id, 'cpu', m.id);
      assert.equal(reg.for(m.id).engine.passthrough, false, m.id);
    }
  });

  test('the default engine can be changed, and the engines file remaps single models', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lipsync-engines-'));
    try {
      const file = join(dir, 'engines.json');
      await writeFile(
        file,
        JSON.stringify({ 'lipsync-2': { engine: 'cpu', settings: { maxOpening: 0.4 } } }),
      );
      const reg = EngineRegistry.fromFile(file, 'passthrough');
      assert.equal(reg.for('lipsync-2').engine.id, 'cpu');
      assert.deepEqual(reg.for('lipsync-2').settings, { maxOpening: 0.4 });
      for (const m of MODELS.filter((x) => x.id !== 'lipsync-2')) {
        assert.equal(reg.for(m.id).engine.id, 'passthrough', m.id);
      }
      assert.equal(EngineRegistry.fromFile(null, 'passthrough').for('sync-3').engine.id, 'passthrough');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an unknown engine name is refused', () => {
    assert.throws(() => new EngineRegistry({}, 'gpu'), /unknown engine "gpu"/);
  });
});

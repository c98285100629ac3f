// Prices are checked when the service starts: a served model without a dollar or credit price refuses
// the start with the configuration's error, instead of generations being billed 0.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/config.js';
import { createTestServices } from '../helpers/index.js';

describe(`prices at start (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lipsync-prices-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const pricingFile = async (name: string, content: string): Promise<string> => {
    const file = join(dir, name);
    await writeFile(file, content);
    return file;
  };

  test('a pricing file whose price is not a number ≥ 0 refuses the start', async () => {
    const file = await pricingFile(
      'no-credits.json',
      JSON.stringify({ 'sync-3': { creditsPerSecond: null } }),
    );
    await assert.rejects(createTestServices({ env: { LIPSYNC_PRICING_FILE: file } }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.deepEqual(err.problems, [
        'LIPSYNC_PRICING_FILE: "sync-3".creditsPerSecond must be a number ≥ 0',
      ]);
      return true;
    });
  });

  test('a pricing file that is not JSON refuses the start', async () => {
    const file = await pricingFile('broken.json', '{ "lipsync-2": ');
    await assert.rejects(createTestServices({ env: { LIPSYNC_PRICING_FILE: file } }), ConfigError);
  });

  test("a file's partial entry keeps the model's other prices, and the service starts", async () => {
    const file = await pricingFile('per-frame.json', JSON.stringify({ 'sync-3': { perFrame: 0.004 } }));
    const t = await createTestServices({ env: { LIPSYNC_PRICING_FILE: file } });
    try {
      assert.deepEqual(t.services.prices['sync-3'], {
        perSecond: 0.1,
        creditsPerSecond: 10,
        perFrame: 0.004,
      });
    } finally {
      await t.cleanup();
    }
  });
});

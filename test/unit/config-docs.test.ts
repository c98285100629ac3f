import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CONFIGURATION_DOC, renderConfigurationDoc } from '../../scripts/config-docs.js';
import { ENV_VARIABLES } from '../../src/config.js';

test('docs/configuration.md is what npm run docs:config writes', async () => {
  assert.equal(
    readFileSync(CONFIGURATION_DOC, 'utf8'),
    await renderConfigurationDoc(),
    'docs/configuration.md is out of date: run npm run docs:config',
  );
});

test('docs/configuration.md lists every variable exactly once', () => {
  const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
  for (const name of Object.keys(ENV_VARIABLES)) {
    const rows = doc.split('\n').filter((line) => line.startsWith(`- \`${name}\` `));
    assert.equal(rows.length, 1, name);
  }
});

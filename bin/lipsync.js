#!/usr/bin/env node
// Entry for the `lipsync` command; runs the compiled CLI (npm install builds it via `prepare`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist', 'cli', 'index.js');
if (!existsSync(entry)) {
  console.error('lipsync: the project is not built yet. Run `npm install` (or `npm run build`) first.');
  process.exit(1);
}
const { runCli } = await import(entry);
await runCli(process.argv);

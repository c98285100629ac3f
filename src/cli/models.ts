// `lipsync models list|download`: the model files the service can use but does not ship (the viseme
// model), fetched from their pinned upstream location (or a mirror) and kept only when their checksum
// matches. The server uses them from LIPSYNC_MODELS_DIR, else `models` in the data folder.
import type { Command } from 'commander';
import { join } from 'node:path';
import { loadConfig, modelsDir } from '../config.js';
import { MODEL_FILES, ModelDownloadError, downloadModel, fileSha256 } from '../speech/model-files.js';
import { ClientError } from './http.js';

type Print = (json: boolean, obj: Record<string, unknown>, text: string) => void;

function folder(given?: string): { dir: string; allowPrivate: boolean } {
  const config = loadConfig(process.env);
  return { dir: given ?? modelsDir(process.env, config.dataDir), allowPrivate: config.allowPrivateUrls };
}

export function registerModelCommands(program: Command, print: Print): void {
  const models = program.command('models').description('model files the server can use (the viseme model)');

  models
    .command('list')
    .description('each model file: present and verified, wrong checksum, or missing')
    .option('--dir <folder>', 'models folder (default $LIPSYNC_MODELS_DIR or <data folder>/models)')
    .option('--json', 'print one JSON object')
    .action(async (opts: { dir?: string; json?: boolean }) => {
      const { dir } = folder(opts.dir);
      const rows = [];
      for (const m of MODEL_FILES) {
        const sha = await fileSha256(join(dir, m.file));
        rows.push({
          file: m.file,
          what: m.what,
          licence: m.licence,
          state: sha === null ? 'missing' : sha === m.sha256 ? 'verified' : 'checksum mismatch',
        });
      }
      print(
        !!opts.json,
        { dir, models: rows },
        rows.map((r) => `${r.file}  ${r.state}  ${r.what}`).join('\n'),
      );
    });

  models
    .command('download')
    .description('fetch the model files from their upstream location (or --from a mirror), checksum-verified')
    .option('--dir <folder>', 'models folder (default $LIPSYNC_MODELS_DIR or <data folder>/models)')
    .option('--from <url>', 'a mirror: files are fetched from <url>/<file name>')
    .option('--json', 'print one JSON object')
    .action(async (opts: { dir?: string; from?: string; json?: boolean }) => {
      const { dir, allowPrivate } = folder(opts.dir);
      const done: { file: string; result: string }[] = [];
      for (const m of MODEL_FILES) {
        try {
          done.push({ file: m.file, result: await downloadModel(m, { dir, from: opts.from, allowPrivate }) });
        } catch (err) {
          const message =
            err instanceof ModelDownloadError ? err.message : `${m.file}: ${(err as Error).message}`;
          throw new ClientError(`download failed: ${message}`, { dir, models: done });
        }
      }
      print(
        !!opts.json,
        { dir, models: done },
        done.map((d) => `${d.file}  ${d.result}  (${dir})`).join('\n'),
      );
    });
}

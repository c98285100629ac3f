// `lipsync worker-token create|list|revoke`: the credentials of remote workers (operator, on the
// database).
import type { Command } from 'commander';
import { WorkerTokenService, workerTokenView } from '../services/worker-tokens.js';
import type { CliDeps } from './speech.js';

function line(t: Record<string, unknown>): string {
  return `${String(t.id)}  ${String(t.prefix)}…  ${String(t.name)}  ${String(t.status)}`;
}

export function registerWorkerTokenCommands(program: Command, deps: CliDeps): void {
  const { print, withServices } = deps;
  const cmd = program
    .command('worker-token')
    .description('manage the tokens of remote workers (`lipsync worker --server URL --token T`)');
  cmd
    .command('create')
    .description('create a worker token (shown only once)')
    .option('--name <name>', 'a name to recognise the worker by')
    .option('--json', 'print one JSON object')
    .action(async (opts: { name?: string; json?: boolean }) => {
      await withServices(async (s) => {
        const { record, token } = await new WorkerTokenService(s.store.db.kysely).create(opts.name);
        print(
          !!opts.json,
          { ...workerTokenView(record), token },
          `created worker token ${record.id} (${record.name}); it is shown only once:\n\n  ${token}\n`,
        );
      });
    });
  cmd
    .command('list')
    .description('list worker tokens (never the secret part)')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      await withServices(async (s) => {
        const list = (await new WorkerTokenService(s.store.db.kysely).list()).map(workerTokenView);
        print(!!opts.json, { tokens: list }, list.map(line).join('\n') || '(no worker tokens)');
      });
    });
  cmd
    .command('revoke')
    .description('revoke a worker token: its calls are refused at once, its running jobs are requeued')
    .argument('<id>')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withServices(async (s) => {
        const t = workerTokenView(await new WorkerTokenService(s.store.db.kysely).revoke(id));
        print(!!opts.json, t, `revoked worker token ${id}`);
      });
    });
}

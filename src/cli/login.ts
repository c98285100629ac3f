// `lipsync login` / `lipsync logout`: the server and key the client commands use when neither a flag
// nor an environment variable names them, saved in the user's config file (user-config.ts).
import type { Command } from 'commander';
import { apiError, client, usageError } from './http.js';
import { removeSavedLogin, saveLogin, userConfigPath } from './user-config.js';

type Print = (json: boolean, obj: Record<string, unknown>, text: string) => void;

export function registerLoginCommands(program: Command, print: Print): void {
  program
    .command('login')
    .description(
      'save a server and API key for the client commands (generate, generation, tts, …) in the user config file',
    )
    .option('--server <url>', 'server base URL (default $LIPSYNC_SERVER)')
    .option('--key <key>', 'API key (default $LIPSYNC_API_KEY)')
    .option('--no-check', 'save without asking the server whether it accepts the key')
    .option('--json', 'print one JSON object')
    .action(async (opts: { server?: string; key?: string; check: boolean; json?: boolean }) => {
      const server = (opts.server ?? process.env.LIPSYNC_SERVER)?.replace(/\/+$/, '');
      const key = opts.key ?? process.env.LIPSYNC_API_KEY;
      if (!server) throw usageError('login needs --server URL (or LIPSYNC_SERVER)');
      if (!key) throw usageError('login needs --key KEY (or LIPSYNC_API_KEY)');
      if (!/^https?:\/\/[^/]/i.test(server)) throw usageError('--server must be an http(s) URL');
      if (opts.check) {
        // Any authenticated read will do: a wrong key or a wrong address is found now, not later.
        const r = await client(server, key)('GET', '/v2/generations?limit=1');
        if (r.status !== 200) throw apiError(`checking the key with ${server}`, r);
      }
      const path = userConfigPath();
      await saveLogin({ server, key }, path);
      print(!!opts.json, { server, configFile: path }, `saved ${server} and its key in ${path}`);
    });

  program
    .command('logout')
    .description('remove the server and key that `lipsync login` saved')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      const path = userConfigPath();
      const removed = await removeSavedLogin(path);
      print(
        !!opts.json,
        { removed, configFile: path },
        removed ? `removed ${path}` : `not logged in (no ${path})`,
      );
    });
}

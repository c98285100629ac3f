// Operator commands that open the database directly: organizations, API keys, admission.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { organizationView } from '../services/organizations.js';
import { apiKeyView } from '../services/api-keys.js';
import { batchLimits, type BatchLimitOverrides } from '../domain/batches.js';
import type { Role } from '../domain/api-keys.js';
import type { CliDeps } from './speech.js';
import { usageError } from './http.js';

/**
 * A positive integer option. Commander reports an InvalidArgumentError itself, naming the option
 * ("option '--min <n>' argument '0' is invalid. …"); the CLI then exits 2 (bad usage).
 */
const positiveInt =
  (name: string) =>
  (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new InvalidArgumentError(`--${name} must be a positive integer.`);
    return n;
  };

const parseConcurrency = positiveInt('concurrency');

function parseFlags(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function orgText(o: Record<string, unknown>): string {
  return `${o.id}  ${o.name}  plan=${o.plan} billing=${o.billing} concurrency=${o.concurrency ?? 'plan default'} flags=${(o.flags as string[]).join(',') || '-'}${o.draft ? ' draft' : ''}`;
}

function orgOptions(cmd: Command, forUpdate: boolean): Command {
  cmd
    .addOption(
      new Option('--plan <plan>', 'plan').choices([
        'free',
        'hobbyist',
        'creator',
        'growth',
        'scale',
        'enterprise',
      ]),
    )
    .addOption(new Option('--billing <mode>', 'billing').choices(['usd', 'credits']))
    .option('--concurrency <n>', 'contracted concurrent generations (enterprise)', parseConcurrency)
    .addOption(
      new Option(
        '--flags <list>',
        forUpdate ? 'comma-separated rollout flags: replaces the whole set' : 'comma-separated rollout flags',
      )
        .argParser(parseFlags)
        .conflicts(forUpdate ? ['addFlags', 'removeFlags'] : []),
    )
    .option('--draft', 'mark the organization as a draft (its keys get 422)')
    .option('--json', 'print one JSON object');
  if (forUpdate)
    cmd
      .option('--add-flags <list>', 'comma-separated rollout flags to turn on (the others stay)', parseFlags)
      .option(
        '--remove-flags <list>',
        'comma-separated rollout flags to turn off (the others stay)',
        parseFlags,
      )
      .option('--no-draft', 'finish a draft organization')
      .option('--name <name>', 'new name');
  return cmd;
}

/** Registers `org`, `key` and `admission`; returns `org` so that other modules add subcommands. */
export function registerOperatorCommands(program: Command, deps: CliDeps): Command {
  const { print, withServices } = deps;
  const org = program.command('org').description('manage organizations');
  orgOptions(
    org.command('create').description('create an organization').requiredOption('--name <name>', 'name'),
    false,
  ).action(
    async (opts: {
      name: string;
      plan?: string;
      billing?: string;
      concurrency?: number;
      flags?: string[];
      draft?: boolean;
      json?: boolean;
    }) => {
      await withServices(async (s) => {
        const o = await s.organizations.create({
          name: opts.name,
          plan: opts.plan ?? 'free',
          billing: opts.billing,
          concurrency: opts.concurrency,
          flags: opts.flags,
          draft: opts.draft ?? false,
        });
        const v = organizationView(o);
        print(!!opts.json, v, orgText(v));
      });
    },
  );
  orgOptions(org.command('update').description('update an organization').argument('<id>'), true).action(
    async (
      id: string,
      opts: {
        name?: string;
        plan?: string;
        billing?: string;
        concurrency?: number;
        flags?: string[];
        addFlags?: string[];
        removeFlags?: string[];
        draft?: boolean;
        json?: boolean;
      },
    ) => {
      await withServices(async (s) => {
        const o = await s.organizations.update(id, {
          name: opts.name,
          plan: opts.plan,
          billing: opts.billing,
          concurrency: opts.concurrency,
          flags: opts.flags,
          addFlags: opts.addFlags,
          removeFlags: opts.removeFlags,
          draft: opts.draft,
        });
        const v = organizationView(o);
        print(!!opts.json, v, orgText(v));
      });
    },
  );
  org
    .command('list')
    .description('list organizations')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      await withServices(async (s) => {
        const list = (await s.organizations.list()).map(organizationView);
        print(!!opts.json, { organizations: list }, list.map(orgText).join('\n') || '(no organizations)');
      });
    });
  org
    .command('secret')
    .description("print (or rotate) the organization's webhook signing secret")
    .argument('<id>')
    .option('--rotate', 'replace the secret with a new one')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { rotate?: boolean; json?: boolean }) => {
      await withServices(async (s) => {
        const o = opts.rotate ? await s.organizations.rotateWebhookSecret(id) : await s.organizations.get(id);
        print(!!opts.json, { organizationId: o.id, secret: o.webhookSecret }, o.webhookSecret);
      });
    });

  org
    .command('account-link')
    .description(
      'print a single-use link (24 hours) that makes an account (a signed-in user) of the organization',
    )
    .argument('<id>')
    .addOption(new Option('--role <role>', 'role').choices(['owner', 'admin', 'member']).default('owner'))
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { role: Role; json?: boolean }) => {
      await withServices(async (s) => {
        const o = await s.organizations.get(id);
        const link = await s.webSessions.createAccountLink(o.id, opts.role);
        print(!!opts.json, { organizationId: o.id, role: opts.role, link }, link);
      });
    });

  org
    .command('batch-limits')
    .description(
      "an organization's batch limits: records per batch and unfinished batches at once (prints them; options change them)",
    )
    .argument('<id>')
    .option('--min <n>', 'fewest records a batch may have (default 20)', positiveInt('min'))
    .option('--max <n>', 'most records a batch may have (default 500)', positiveInt('max'))
    .option(
      '--concurrency <n>',
      "unfinished batches at once (default: the plan's, LIPSYNC_BATCH_CONCURRENCY)",
      positiveInt('concurrency'),
    )
    .option('--reset', "drop the overrides first: the plan's defaults apply (again)")
    .option('--json', 'print one JSON object')
    .action(
      async (
        id: string,
        opts: { min?: number; max?: number; concurrency?: number; reset?: boolean; json?: boolean },
      ) => {
        await withServices(async (s) => {
          const o = await s.organizations.get(id);
          const given: BatchLimitOverrides = {
            ...(opts.min !== undefined ? { minRecords: opts.min } : {}),
            ...(opts.max !== undefined ? { maxRecords: opts.max } : {}),
            ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
          };
          if (opts.reset || Object.keys(given).length) {
            // Options not given keep their earlier override, so limits can be set one at a time.
            const base = opts.reset ? {} : ((await s.store.organizations.batchLimits(o.id)) ?? {});
            const next = Object.fromEntries(
              Object.entries({ ...base, ...given }).filter(([, v]) => v !== null && v !== undefined),
            ) as BatchLimitOverrides;
            const records = batchLimits(o.plan, next);
            if (records.minRecords > records.maxRecords)
              throw usageError(
                `the fewest records (${records.minRecords}) would be more than the most (${records.maxRecords})`,
              );
            await s.store.organizations.setBatchLimits(o.id, Object.keys(next).length ? next : null);
          }
          const overrides = await s.store.organizations.batchLimits(o.id);
          const l = await s.batches.limits(o);
          const limits = { minRecords: l.minRecords, maxRecords: l.maxRecords, concurrency: l.concurrency };
          print(
            !!opts.json,
            { organizationId: o.id, plan: o.plan, limits, overrides },
            `${o.id}  plan=${o.plan} records=${limits.minRecords}..${limits.maxRecords} concurrency=${limits.concurrency}` +
              (overrides ? ` (overrides: ${JSON.stringify(overrides)})` : ' (plan defaults)'),
          );
        });
      },
    );

  const key = program.command('key').description('manage API keys');
  key
    .command('create')
    .description('create an API key (the full key is shown only here)')
    .requiredOption('--org <id>', 'organization id')
    .option('--name <name>', 'key name (blank becomes "API key")')
    .addOption(new Option('--role <role>', 'role').choices(['owner', 'admin', 'member']).default('owner'))
    .option('--expires-at <iso>', 'expiry date-time')
    .option('--json', 'print one JSON object')
    .action(
      async (opts: { org: string; name?: string; role: string; expiresAt?: string; json?: boolean }) => {
        await withServices(async (s) => {
          const c = await s.apiKeys.create({
            organizationId: opts.org,
            name: opts.name,
            role: opts.role,
            expiresAt: opts.expiresAt,
          });
          const v = { ...apiKeyView(c.record), key: c.key };
          print(!!opts.json, v, `${c.key}\n(id ${c.record.id}, role ${c.record.role}; shown only once)`);
        });
      },
    );
  key
    .command('list')
    .description("list an organization's keys (never the secret part)")
    .requiredOption('--org <id>', 'organization id')
    .option('--json', 'print one JSON object')
    .action(async (opts: { org: string; json?: boolean }) => {
      await withServices(async (s) => {
        const list = (await s.apiKeys.list(opts.org)).map(apiKeyView);
        print(
          !!opts.json,
          { keys: list },
          list.map((k) => `${k.id}  ${k.prefix}…  ${k.name}  role=${k.role} ${k.status}`).join('\n') ||
            '(no keys)',
        );
      });
    });
  key
    .command('rename')
    .argument('<id>')
    .argument('<name>')
    .option('--json', 'print one JSON object')
    .action(async (id: string, name: string, opts: { json?: boolean }) => {
      await withServices(async (s) => {
        const k = apiKeyView(await s.apiKeys.rename(id, name));
        print(!!opts.json, k, `renamed ${id} to ${k.name}`);
      });
    });
  key
    .command('revoke')
    .argument('<id>')
    .option('--json', 'print one JSON object')
    .action(async (id: string, opts: { json?: boolean }) => {
      await withServices(async (s) => {
        const k = apiKeyView(await s.apiKeys.revoke(id));
        print(!!opts.json, k, `revoked ${id}`);
      });
    });

  const admission = program.command('admission').description('pause or resume acceptance of new generations');
  admission
    .command('pause')
    .option('--reason <reason>', 'shown in logs and status')
    .option('--json', 'print one JSON object')
    .action(async (opts: { reason?: string; json?: boolean }) => {
      await withServices(async (s) => {
        const st = await s.admission.pause(opts.reason ?? null);
        print(
          !!opts.json,
          { ...st },
          'admission paused: new generations get 503 generation_admission_paused',
        );
      });
    });
  admission
    .command('resume')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      await withServices(async (s) => {
        const st = await s.admission.resume();
        print(!!opts.json, { ...st }, 'admission resumed');
      });
    });
  admission
    .command('status')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      await withServices(async (s) => {
        const st = await s.admission.state();
        print(
          !!opts.json,
          { ...st },
          st.paused ? `paused since ${st.since}${st.reason ? `: ${st.reason}` : ''}` : 'accepting',
        );
      });
    });

  return org;
}

// Throughput and latency of GET /v2/generate/{id} (authenticated, a real COMPLETED row) as ratios to
// a bare Fastify route returning a small JSON object, measured in the same run with the same
// autocannon settings. Every server runs in its own child process; autocannon runs here.
//
//   node --import tsx bench/get-generation.ts [--quick] [--no-postgres] [--connections=N]
//                                             [--duration=S] [--rounds=N]
import { parseArgs, intOption } from './lib/args.js';
import { runMain } from './lib/cleanup.js';
import { startBareServer, startServiceServer, type BenchChild } from './lib/child.js';
import { deployment, postgresProblem, postgresUrlForDisplay } from './lib/deployment.js';
import { load, type LoadResult, type LoadSettings } from './lib/load.js';
import { machineLine, median, num, printTable } from './lib/stats.js';

interface Target {
  name: string;
  url: string;
  /** Spread the requests over these paths (many generations polled) instead of the URL's. */
  paths?: string[];
  headers: Record<string, string>;
  server: BenchChild;
  results: LoadResult[];
}

const args = parseArgs();
const rounds = intOption(args, 'rounds', args.quick ? 1 : 3);
const settings: LoadSettings = {
  connections: intOption(args, 'connections', 10),
  duration: intOption(args, 'duration', args.quick ? 2 : 5),
};
const warmup: LoadSettings = { ...settings, duration: 1 };
/** Generations polled at random in the "many generations" targets. */
const SPREAD = 1000;

await runMain(
  'get-generation',
  async () => {
    console.log('# GET /v2/generate/{id} against a bare Fastify route');
    console.log(
      `${machineLine()}\nautocannon ${settings.connections} connections, ` +
        `pipelining 1, ${settings.duration} s per load (after a 1 s warm-up), ${rounds} round(s)`,
    );
    // The service counts every request against the rate limit as usual, with a ceiling this load
    // does not reach.
    const serviceEnv = { LIPSYNC_ROLE: 'api', LIPSYNC_RATE_LIMIT_PER_MINUTE: '1000000' };

    const targets: Target[] = [];
    const bare = await startBareServer();
    targets.push({
      name: 'bare Fastify route (baseline)',
      url: `${bare.ready.url}/bare/${'0'.repeat(8)}`,
      headers: {},
      server: bare,
      results: [],
    });

    const addService = async (
      name: string,
      database: 'sqlite' | 'postgres',
      env: Record<string, string>,
      health: boolean,
      spread: boolean,
    ) => {
      const dep = await deployment(database, { ...serviceEnv, ...env });
      const server = await startServiceServer(name, dep.env);
      const [id] = await server.seed(1, 'COMPLETED');
      const headers = { 'x-api-key': server.ready.apiKey as string };
      const url = `${server.ready.url}/v2/generate/${id}`;
      const check = await fetch(url, { headers });
      const body = (await check.json()) as { id?: string; status?: string };
      if (check.status !== 200 || body.id !== id || body.status !== 'COMPLETED') {
        throw new Error(`${name}: GET ${url} answered ${check.status} ${JSON.stringify(body)}`);
      }
      if (health) {
        targets.push({
          name: `GET /health, no auth (${database})`,
          url: `${server.ready.url}/health`,
          headers: {},
          server,
          results: [],
        });
      }
      targets.push({ name, url, headers, server, results: [] });
      if (spread) {
        // Many clients polling different generations: no two lookups alike, so neither the read cache
        // (SQLite) nor a coalesced query (PostgreSQL) can answer one lookup for many requests.
        const ids = await server.seed(SPREAD, 'COMPLETED');
        const paths = ids.map((i) => `/v2/generate/${i}`);
        targets.push({
          name: `same, ${SPREAD} generations (${database})`,
          url,
          paths,
          headers,
          server,
          results: [],
        });
      }
    };
    await addService('GET /v2/generate/{id} (sqlite)', 'sqlite', {}, true, !args.quick);
    if (!args.quick)
      await addService('same, LOG_LEVEL=info (sqlite)', 'sqlite', { LOG_LEVEL: 'info' }, false, false);
    const pgProblem = args.noPostgres ? 'skipped (--no-postgres)' : await postgresProblem();
    if (pgProblem === null) {
      console.log(`PostgreSQL: ${postgresUrlForDisplay()} (a fresh schema)`);
      await addService('GET /v2/generate/{id} (postgres)', 'postgres', {}, false, true);
    } else {
      console.log(`PostgreSQL not measured: ${pgProblem}`);
    }

    for (let r = 1; r <= rounds; r++) {
      for (const t of targets) {
        await load(t.url, t.headers, { ...warmup, paths: t.paths }, t.server);
        const res = await load(t.url, t.headers, { ...settings, paths: t.paths }, t.server);
        if (res.non2xx > 0 || res.errors > 0) {
          throw new Error(`${t.name}: ${res.non2xx} non-2xx responses and ${res.errors} errors/timeouts`);
        }
        t.results.push(res);
        process.stdout.write(`  round ${r}/${rounds}: ${t.name}: ${num(res.rps, 0)} req/s\n`);
      }
    }

    // Ratios are taken per round (each target against the baseline of the same round), then the
    // median over rounds is shown.
    const base = targets[0].results;
    const perRound = (t: Target, f: (x: LoadResult) => number) => median(t.results.map(f));
    const ratioPerRound = (t: Target, f: (x: LoadResult) => number) =>
      median(t.results.map((x, i) => f(x) / f(base[i])));
    console.log('');
    console.log(
      `Medians over ${rounds} round(s); "x" columns are ratios to the bare Fastify route of the same round.`,
    );
    printTable([
      ['target', 'req/s', 'x', 'p50 ms', 'x', 'p99 ms', 'x', 'server CPU us/req', 'x'],
      ...targets.map((t) => [
        t.name,
        num(
          perRound(t, (x) => x.rps),
          0,
        ),
        `${ratioPerRound(t, (x) => x.rps).toFixed(2)}x`,
        num(
          perRound(t, (x) => x.p50),
          2,
        ),
        `${ratioPerRound(t, (x) => x.p50).toFixed(2)}x`,
        num(
          perRound(t, (x) => x.p99),
          2,
        ),
        `${ratioPerRound(t, (x) => x.p99).toFixed(2)}x`,
        num(
          perRound(t, (x) => x.serverCpuUsPerRequest),
          0,
        ),
        `${ratioPerRound(t, (x) => x.serverCpuUsPerRequest).toFixed(2)}x`,
      ]),
    ]);
    const get = targets.find((t) => t.name === 'GET /v2/generate/{id} (sqlite)') as Target;
    console.log('');
    console.log(
      `GET /v2/generate/{id} (sqlite) serves ${ratioPerRound(get, (x) => x.rps).toFixed(2)}x the requests per second ` +
        `of the bare route and costs the server ${ratioPerRound(get, (x) => x.serverCpuUsPerRequest).toFixed(1)}x ` +
        'its CPU time per request.',
    );

    for (const s of new Set(targets.map((t) => t.server))) await s.stop();
  },
  { maxMs: (rounds * 6 * (settings.duration + 3) + 120) * 1000 },
);

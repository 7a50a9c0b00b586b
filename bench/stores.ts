import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { measureFailover, type Topology } from '../test/helpers/failover-load.js';
import { measureFloods, type FloodCode } from '../test/helpers/flood-load.js';

const HELP = `tsx bench/stores.ts [floods] [failover] [--tree DIR]

Replays what an outside attack and a soak with faults did to the gateway's stores, and prints the figures:

  floods     in-process store (no Redis), default bounds: 200 live sessions and grants, then 12,000 garbage opaque
             tokens, 3,000 consent-link requests of one caller, 10,500 links of different visitors; how many
             sessions and grants are still alive, how many link records one caller left (about a minute)
  failover   Redis Sentinel and Redis Cluster (real redis-server processes, replicas, 1 s failure detection),
             40 known sessions under load while a primary is killed and a replica promoted: the share of their
             requests refused and for how long (about 30 seconds)

  --tree DIR the gateway checkout whose src/ is measured (default: this one), e.g. another worktree of main with
             its own node_modules, to compare before and after with the same load

Needs redis-server, redis-sentinel (redis-server --sentinel) and redis-cli on the PATH. Everything listens on
127.0.0.1; every run is bounded in requests and time.`;

const { values, positionals } = parseArgs({ options: { tree: { type: 'string' }, help: { type: 'boolean' } }, allowPositionals: true });
if (values.help) {
  console.log(HELP);
  process.exit(0);
}
const tree = resolve(values.tree ?? new URL('..', import.meta.url).pathname);
const load = async <T>(path: string): Promise<T> => (await import(pathToFileURL(resolve(tree, path)).href)) as T;

const code: FloodCode = {
  ...(await load<Pick<FloodCode, 'parseConfig'>>('src/config/load.ts')),
  ...(await load<Pick<FloodCode, 'assembleGateway'>>('src/assemble.ts')),
  ...(await load<Pick<FloodCode, 'createCacheStore'>>('src/cache/create-store.ts')),
  ...(await load<Pick<FloodCode, 'createGrantStore'>>('src/consent/grant-store.ts')),
  ...(await load<Pick<FloodCode, 'createConsentLinks'>>('src/consent/links.ts')),
};
const runs = positionals.length === 0 ? ['floods', 'failover'] : positionals;
console.log(`tree ${tree}; ${cpus().length} cores; load average ${loadavg().map((value) => value.toFixed(2)).join(' ')}`);

if (runs.includes('floods')) {
  const figures = await measureFloods(code, { liveSessions: 200, garbageTokens: 12_000, oneCallerLinks: 3_000, visitorLinks: 10_500 });
  console.log(`floods ${JSON.stringify(figures)}`);
}
if (runs.includes('failover')) {
  for (const topology of ['sentinel', 'cluster'] satisfies Topology[]) {
    const figures = await measureFailover(topology, code);
    const percent = (part: number, whole: number) => (whole === 0 ? 0 : Number(((100 * part) / whole).toFixed(1)));
    console.log(
      `failover ${JSON.stringify({ ...figures, refusedPercent: percent(figures.refused, figures.requests), refusedInWindowPercent: percent(figures.refused, figures.requestsInWindow) })}`,
    );
  }
}

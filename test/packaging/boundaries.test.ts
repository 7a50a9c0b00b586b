import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

/**
 * The boundaries of the layout (eslint.config.js, docs/architecture.md) hold: an import planted where the layout
 * forbids it fails `npm run lint`. The planted files are linted as text under their would-be paths, with the
 * type-aware rules off (they need the file on disk; the boundary rules do not).
 */

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname, overrideConfig: tseslint.configs.disableTypeChecked });

async function ruleIds(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((message) => message.ruleId ?? `fatal: ${message.message}`);
}

describe('npm run lint holds the boundaries of the layout', () => {
  it.each<[string, string, string]>([
    ['a decision step imports fastify', 'src/decision/steps/planted.ts', "import fastify from 'fastify';\nexport const planted = fastify;\n"],
    ['a decision file imports undici', 'src/decision/planted.ts', "import { request } from 'undici';\nexport const planted = request;\n"],
    ['a decision file imports pino', 'src/decision/planted.ts', "import type { Logger } from 'pino';\nexport type Planted = Logger;\n"],
    ['a decision file imports a door', 'src/decision/planted.ts', "import { registerProxyRoutes } from '../doors/proxy/plugin.js';\nexport const planted = registerProxyRoutes;\n"],
    ['a decision step imports the wiring root', 'src/decision/steps/planted.ts', "import { buildServer } from '../../gateway/build.js';\nexport const planted = buildServer;\n"],
    ['a decision file imports a service behind a port', 'src/decision/planted.ts', "import { createSessionBindings } from '../session/bindings.js';\nexport const planted = createSessionBindings;\n"],
    ['a door reaches past the decision\'s public face', 'src/doors/planted.ts', "import { createDecisionState } from '../decision/state.js';\nexport const planted = createDecisionState;\n"],
    ['config/ imports another folder', 'src/config/planted.ts', "import { perObject } from '../lib/memo.js';\nexport const planted = perObject;\n"],
    ['lib/ imports another folder', 'src/lib/planted.ts', "import type { CompiledConfig } from '../config/types.js';\nexport type Planted = CompiledConfig;\n"],
    ['cache/ imports config/', 'src/cache/planted.ts', "import type { CompiledConfig } from '../config/types.js';\nexport type Planted = CompiledConfig;\n"],
    ['a service imports the wiring root', 'src/auth/planted.ts', "import { buildServer } from '../gateway/build.js';\nexport const planted = buildServer;\n"],
    ['a file at src/ imports the wiring root', 'src/planted.ts', "import { buildServer } from './gateway/build.js';\nexport const planted = buildServer;\n"],
    ['a service imports fastify', 'src/grants/planted.ts', "import fastify from 'fastify';\nexport const planted = fastify;\n"],
    ['a door loads the OpenTelemetry API at start', 'src/doors/proxy/planted.ts', "import { trace } from '@opentelemetry/api';\nexport const planted = trace;\n"],
    ['a door loads its tracing module at start', 'src/doors/proxy/planted.ts', "import { createDoorTracing } from '../shared/tracing.js';\nexport const planted = createDoorTracing;\n"],
    ['the wiring root loads the SDK at start', 'src/gateway/planted.ts', "import { startTracerProvider } from '../observability/tracing-sdk.js';\nexport const planted = startTracerProvider;\n"],
    ['the wiring root loads the fastify instrumentation at start', 'src/gateway/planted.ts', "import { FastifyOtelInstrumentation } from '@fastify/otel';\nexport const planted = FastifyOtelInstrumentation;\n"],
  ])('fails when %s', async (_name, filePath, code) => {
    const rules = await ruleIds(filePath, code);
    expect(rules.length).toBeGreaterThan(0);
    expect(rules.every((rule) => ['no-restricted-imports', '@typescript-eslint/no-restricted-imports', 'import-x/no-restricted-paths'].includes(rule))).toBe(true);
  });

  it.each<[string, string, string]>([
    ['a door imports the decision\'s public face', 'src/doors/planted.ts', "import { createDecisionState } from '../decision/index.js';\nexport const planted = createDecisionState;\n"],
    ['a door imports the tracing types only', 'src/doors/proxy/planted.ts', "import type { DoorTracing } from '../shared/tracing.js';\nexport type Planted = DoorTracing;\n"],
    ['a decision step imports policy and lib', 'src/decision/steps/planted.ts', "import { grantsAll } from '../../policy/scopes.js';\nimport { settle } from '../../lib/maybe-promise.js';\nexport const planted = [grantsAll, settle];\n"],
    ['cache/ imports lib/', 'src/cache/planted.ts', "import { perObject } from '../lib/memo.js';\nexport const planted = perObject;\n"],
    ['main.ts imports the wiring root', 'src/main.ts', "import { serveCommand } from './gateway/serve.js';\nexport const planted = serveCommand;\n"],
  ])('passes when %s', async (_name, filePath, code) => {
    expect(await ruleIds(filePath, code)).toEqual([]);
  });
});

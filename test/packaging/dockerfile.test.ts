import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// No Docker engine runs here: these checks read the Dockerfile; packaged-install.test.ts performs its install steps.

const ROOT_DIR = fileURLToPath(new URL('../../', import.meta.url));
const readRoot = (path: string) => readFileSync(join(ROOT_DIR, path), 'utf8');

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** Instructions per stage, continuation lines joined and comments dropped. */
function stages(dockerfile: string): Instruction[][] {
  const lines = dockerfile.replace(/\\\n/g, ' ').split('\n').map((line) => line.trim());
  const result: Instruction[][] = [];
  for (const line of lines) {
    if (line === '' || line.startsWith('#')) continue;
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') result.push([]);
    result.at(-1)?.push({ keyword: keyword.toUpperCase(), args: args.replace(/\s+/g, ' ') });
  }
  return result;
}

const all = stages(readRoot('Dockerfile'));
const build = all[0] ?? [];
const runtime = all.at(-1) ?? [];
const argsOf = (stage: Instruction[], keyword: string) =>
  stage.filter((instruction) => instruction.keyword === keyword).map((instruction) => instruction.args);
const pkg = JSON.parse(readRoot('package.json')) as { files: string[] };

describe('Dockerfile', () => {
  it('builds in a node:22 stage with dev dependencies and runs on a slim node:22 stage', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(readRoot('Dockerfile')).toMatch(/^ARG NODE_VERSION=22$/m);
    expect(argsOf(build, 'FROM')[0]).toMatch(/^node:\$\{NODE_VERSION\}\S* AS build$/);
    expect(argsOf(build, 'RUN')).toEqual(expect.arrayContaining([expect.stringMatching(/^npm ci\b(?!.*--omit)/), 'npm run build']));
    expect(argsOf(runtime, 'FROM')[0]).toMatch(/^node:\$\{NODE_VERSION\}-\S*slim AS runtime$/);
  });

  it('installs production dependencies only, from the lockfile, in the runtime stage', () => {
    expect(argsOf(runtime, 'COPY')).toContain('package.json package-lock.json ./');
    expect(argsOf(runtime, 'RUN')).toEqual(expect.arrayContaining([expect.stringMatching(/^npm ci --omit=dev\b/)]));
    expect(argsOf(runtime, 'ENV')).toContain('NODE_ENV=production');
  });

  it('the build stage copies what tsconfig.build.json extends', () => {
    const extended = (JSON.parse(readRoot('tsconfig.build.json')) as { extends: string }).extends.replace(/^\.\//, '');
    expect(argsOf(build, 'COPY').join(' ')).toContain(extended);
  });

  it('ships every folder package.json publishes, the compiled dist from the build stage', () => {
    const copies = argsOf(runtime, 'COPY');
    for (const folder of pkg.files) {
      expect(copies).toContain(folder === 'dist' ? '--from=build /src/dist ./dist' : `${folder} ./${folder}`);
    }
  });

  it('runs as a numeric non-root user', () => {
    const [user] = argsOf(runtime, 'USER');
    expect(user).toMatch(/^[1-9]\d*:[1-9]\d*$/);
  });

  it('starts Node directly, so signals reach it, with the documented config path', () => {
    expect(argsOf(runtime, 'ENTRYPOINT')).toEqual(['["node", "dist/main.js"]']);
    expect(argsOf(runtime, 'CMD')).toEqual(['["serve", "--config", "/etc/mcp-auth-gateway/config.yaml"]']);
    expect(argsOf(runtime, 'EXPOSE')).toEqual(['8080 9090']);
  });

  it('checks health with Node\'s fetch, not curl or wget', () => {
    const [healthcheck = ''] = argsOf(runtime, 'HEALTHCHECK');
    expect(healthcheck).toMatch(/CMD \["node", "-e", ".*fetch\(/);
    expect(healthcheck).not.toMatch(/curl|wget/);
    expect(argsOf(runtime, 'ENV')).toContain('MCP_GATEWAY_HEALTHCHECK_URL=http://127.0.0.1:8080/healthz');
  });

  it('carries the OCI labels', () => {
    const labels = argsOf(runtime, 'LABEL').join(' ');
    for (const name of ['title', 'description', 'licenses', 'version', 'revision', 'created']) {
      expect(labels).toContain(`org.opencontainers.image.${name}=`);
    }
  });
});

describe('.dockerignore', () => {
  const patterns = readRoot('.dockerignore').split('\n').map((line) => line.trim()).filter((line) => line !== '' && !line.startsWith('#'));

  it('is an allow-list: everything is excluded unless named', () => {
    expect(patterns[0]).toBe('*');
    expect(patterns.slice(1).every((pattern) => pattern.startsWith('!'))).toBe(true);
  });

  it('lets in every path the Dockerfile copies from the build context, and nothing secret', () => {
    const allowed = new Set(patterns.slice(1).map((pattern) => pattern.slice(1)));
    const sources = all
      .flatMap((stage) => argsOf(stage, 'COPY'))
      .filter((args) => !args.startsWith('--from='))
      .flatMap((args) => args.split(' ').slice(0, -1));
    expect(sources.filter((source) => !allowed.has(source.replace(/\/$/, '')))).toEqual([]);
    for (const secretish of ['.git', '.env', 'node_modules', 'dist']) expect(allowed.has(secretish)).toBe(false);
  });
});

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair } from 'jose';
import { freePort } from './net.js';
import { eventually } from './poll.js';

/**
 * Glewlwyd (Debian's `glewlwyd` package, a C OAuth 2 / OpenID Connect server nobody here wrote) on a loopback port,
 * set up through its own admin REST API as an organisation's IdP: a database user backend, an OpenID Connect plugin
 * (code flow, PKCE, ID token signed with an RS256 key from jose), one confidential client, and users whose extra
 * claims (a `groups`-like list) go into every ID token and the userinfo answer.
 */

const GLEWLWYD = '/usr/bin/glewlwyd';
const MODULES = '/usr/lib/glewlwyd';
const WEBAPP = '/usr/share/glewlwyd/webapp';
const WEBAPP_CONFIG = '/usr/share/glewlwyd/templates/config.json';
const SQLITE_SCHEMA = '/usr/share/dbconfig-common/data/glewlwyd/install/sqlite3';
const INSTALL_HINT = 'apt-get install glewlwyd (Debian; .ci/run installs it)';
/** The schema's built-in administrator (its password hash is in the package's SQL script). */
const ADMIN = { username: 'admin', password: 'password' } as const;
/** The plugin instance's name is the last segment of the issuer: `<url>/api/<name>`. */
const PLUGIN = 'oidc';
/** Scopes an OpenID Connect relying party usually asks for; `openid` comes with the schema. */
const STANDARD_SCOPES = ['openid', 'email', 'profile'] as const;

export interface GlewlwydUser {
  readonly username: string;
  readonly password: string;
  readonly email: string;
  readonly name?: string;
  /** Extra claims, each a list of strings (e.g. `{ groups: ['calc-admins'] }`); names must be in `options.claims`. */
  readonly claims?: Readonly<Record<string, readonly string[]>>;
}

export interface GlewlwydOptions {
  readonly client: { readonly clientId: string; readonly clientSecret: string; readonly redirectUris: readonly string[] };
  readonly users: readonly GlewlwydUser[];
  /** Names of the extra list claims put in every ID token and userinfo answer (a user without one gets none). */
  readonly claims?: readonly string[];
}

export interface Glewlwyd {
  /** `http://127.0.0.1:<port>/api/oidc`: discovery is at `<issuer>/.well-known/openid-configuration`. */
  readonly issuer: string;
  readonly users: readonly GlewlwydUser[];
  /** Glewlwyd's own log (DEBUG level): read it when a sign-in fails. */
  readonly logFile: string;
  stop(): Promise<void>;
}

export async function startGlewlwyd(options: GlewlwydOptions): Promise<Glewlwyd> {
  if (!existsSync(GLEWLWYD)) throw new Error(`glewlwyd is not installed: ${INSTALL_HINT}`);
  const unknownClaims = options.users.flatMap((user) => Object.keys(user.claims ?? {})).filter((claim) => !options.claims?.includes(claim));
  if (unknownClaims.length > 0) throw new Error(`user claims ${unknownClaims.join(', ')} are not in options.claims`);

  const dir = mkdtempSync(join(tmpdir(), 'glewlwyd-'));
  const logFile = join(dir, 'glewlwyd.log');
  prepareFiles(dir);
  const { child, url } = await launch(dir, logFile);
  try {
    const admin = await AdminSession.open(url);
    await configure(admin, url, options);
  } catch (error) {
    await terminate(child);
    throw new Error(`glewlwyd did not become an OpenID Connect provider: ${(error as Error).message}\n(log: ${logFile})`, { cause: error });
  }
  return {
    issuer: `${url}/api/${PLUGIN}`,
    users: options.users,
    logFile,
    async stop() {
      await terminate(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Of one request to glewlwyd while it is set up: a server that accepts and never answers must not stall the start. */
const REQUEST_TIMEOUT_MS = 5_000;

/** Tries this many free ports: another process may take the one picked before glewlwyd binds it. */
const PORT_ATTEMPTS = 3;

/** glewlwyd answering on a free loopback port, with the configuration file written for that port. */
async function launch(dir: string, logFile: string): Promise<{ child: ChildProcess; url: string }> {
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    writeFileSync(join(dir, 'glewlwyd.conf'), configFile({ url, port, dir, logFile }));
    const logStart = existsSync(logFile) ? statSync(logFile).size : 0;
    const child = spawn(GLEWLWYD, ['--config-file', join(dir, 'glewlwyd.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const explain = (): string => `glewlwyd stderr: ${stderr.trim() || '(empty)'}; log: ${logFile}`;
    try {
      await eventually(`glewlwyd answering on ${url}`, () => answering(child, url, explain), { attempts: 200, context: explain });
      return { child, url };
    } catch (error) {
      await terminate(child);
      // The log says why it stopped; a port taken meanwhile ("Error MHD_start_daemon") is worth another try.
      const portTaken = existsSync(logFile) && readFileSync(logFile).subarray(logStart).toString('utf8').includes('MHD_start_daemon');
      if (!portTaken || attempt === PORT_ATTEMPTS) {
        throw new Error(`glewlwyd did not start: ${(error as Error).message}\n(log: ${logFile})`, { cause: error });
      }
    }
  }
}

/** The SQLite database from the package's schema, and the login web app with its config. */
function prepareFiles(dir: string): void {
  const schema = spawnSync('sqlite3', [join(dir, 'glewlwyd.db')], { input: readFileSync(SQLITE_SCHEMA), encoding: 'utf8' });
  if (schema.status !== 0) throw new Error(`sqlite3 could not load ${SQLITE_SCHEMA}: ${schema.stderr || schema.error?.message}`);
  // Glewlwyd's static file server refuses symbolic links (the package's config.json is one, into /etc): a copy.
  const webapp = join(dir, 'webapp');
  cpSync(WEBAPP, webapp, { recursive: true, dereference: true, filter: (source) => source !== join(WEBAPP, 'config.json') });
  writeFileSync(join(webapp, 'config.json'), readFileSync(WEBAPP_CONFIG));
}

/**
 * libconfig syntax. No `use_secure_connection` line at all: its mere presence, even `false`, makes glewlwyd look
 * for a certificate and exit.
 */
function configFile(values: { url: string; port: number; dir: string; logFile: string }): string {
  const mimeTypes = Object.entries({ '.html': 'text/html', '.css': 'text/css', '.js': 'application/javascript', '.json': 'application/json', '.png': 'image/png', '.ico': 'image/x-icon', '.woff': 'font/woff', '.woff2': 'font/woff2', '.ttf': 'font/ttf' })
    .map(([extension, mimeType]) => `  { extension = "${extension}"; mime_type = "${mimeType}"; }`)
    .join(',\n');
  return `port = ${values.port}
bind_address = "127.0.0.1"
external_url = "${values.url}"
login_url = "login.html"
api_prefix = "api"
static_files_path = "${values.dir}/webapp/"
static_files_mime_types = (
${mimeTypes}
);
allow_origin = "*"
log_mode = "file"
log_level = "DEBUG"
log_file = "${values.logFile}"
cookie_secure = 0
session_key = "GLEWLWYD2_SESSION_ID"
admin_session_authentication = "cookie"
profile_session_authentication = "cookie"
login_api_enabled = true
admin_scope = "g_admin"
profile_scope = "g_profile"
hash_algorithm = "SHA512"
user_module_path = "${MODULES}/user"
client_module_path = "${MODULES}/client"
user_auth_scheme_module_path = "${MODULES}/scheme"
plugin_module_path = "${MODULES}/plugin"
database = { type = "sqlite3"; path = "${values.dir}/glewlwyd.db"; };
`;
}

async function answering(child: ChildProcess, url: string, explain: () => string): Promise<true | undefined> {
  if (child.exitCode !== null || child.signalCode !== null) throw new Error(`glewlwyd exited (${child.exitCode ?? child.signalCode}); ${explain()}`);
  try {
    return (await fetch(`${url}/config`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })).ok ? true : undefined;
  } catch {
    return undefined;
  }
}

/** The administrator's cookie session on the admin REST API (`/api/...`, scope `g_admin`). */
class AdminSession {
  private constructor(
    private readonly api: string,
    private readonly cookie: string,
  ) {}

  static async open(url: string): Promise<AdminSession> {
    const response = await fetch(`${url}/api/auth/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const cookie = response.headers.getSetCookie().map((line) => line.split(';')[0]).join('; ');
    if (!response.ok || !cookie) throw new Error(`admin sign-in answered ${response.status} ${await response.text()}`);
    return new AdminSession(`${url}/api`, cookie);
  }

  async send(method: 'POST' | 'PUT', path: string, body: unknown): Promise<void> {
    const response = await fetch(`${this.api}${path}`, { method, headers: { 'content-type': 'application/json', cookie: this.cookie }, body: JSON.stringify(body), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`${method} /api${path} answered ${response.status} ${await response.text()}`);
  }
}

async function configure(admin: AdminSession, url: string, options: GlewlwydOptions): Promise<void> {
  const claims = options.claims ?? [];
  // The schema's database backend stores only the user properties its data-format names; an update is read at the
  // instance's next start (`reset`).
  await admin.send('PUT', '/mod/user/database', {
    module: 'database',
    name: 'database',
    display_name: 'Database backend',
    order_rank: 0,
    parameters: {
      'use-glewlwyd-connection': true,
      'data-format': Object.fromEntries(claims.map((claim) => [claim, { multiple: true, read: true, write: true, 'profile-read': true, 'profile-write': false }])),
    },
  });
  await admin.send('PUT', '/mod/user/database/reset', {});
  // A scope the user holds with `password_required` is what makes the login page ask for the password.
  await admin.send('PUT', '/scope/openid', { display_name: 'Open ID', description: 'Open ID Connect scope', password_required: true, password_max_age: 0, scheme: {} });
  for (const scope of STANDARD_SCOPES.filter((name) => name !== 'openid')) {
    await admin.send('POST', '/scope/', { name: scope, display_name: scope, description: `OpenID Connect ${scope} claims`, password_required: true, password_max_age: 0, scheme: {} });
  }
  await admin.send('POST', '/mod/plugin/', { module: 'oidc', name: PLUGIN, display_name: 'OpenID Connect', parameters: await pluginParameters(`${url}/api/${PLUGIN}`, claims) });
  await admin.send('POST', '/client/', {
    client_id: options.client.clientId,
    name: options.client.clientId,
    enabled: true,
    confidential: true,
    client_secret: options.client.clientSecret,
    redirect_uri: options.client.redirectUris,
    authorization_type: ['code', 'refresh_token'],
    token_endpoint_auth_method: ['client_secret_basic', 'client_secret_post'],
    scope: [],
  });
  for (const user of options.users) {
    await admin.send('POST', '/user/', {
      username: user.username,
      password: user.password,
      email: user.email,
      name: user.name ?? user.username,
      enabled: true,
      scope: [...STANDARD_SCOPES],
      ...user.claims,
    });
  }
}

async function pluginParameters(issuer: string, claims: readonly string[]): Promise<Record<string, unknown>> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'glewlwyd-test', alg: 'RS256', use: 'sig' };
  return {
    iss: issuer,
    'jwks-private': JSON.stringify({ keys: [signingKey] }),
    'default-kid': signingKey.kid,
    'jwks-show': true,
    'access-token-duration': 3600,
    'refresh-token-duration': 1209600,
    'code-duration': 600,
    'refresh-token-rolling': true,
    'allow-non-oidc': false,
    'auth-type-code-enabled': true,
    'auth-type-token-enabled': false,
    'auth-type-id-token-enabled': false,
    'auth-type-none-enabled': false,
    'auth-type-password-enabled': false,
    'auth-type-client-enabled': false,
    'auth-type-device-enabled': false,
    'auth-type-refresh-enabled': true,
    'pkce-allowed': true,
    'pkce-method-plain-allowed': false,
    'pkce-required': true,
    'subject-type': 'public',
    'name-claim': 'on-demand',
    'name-claim-scope': ['profile'],
    'email-claim': 'on-demand',
    'email-claim-scope': ['email'],
    'scope-claim': 'no',
    claims: claims.map((claim) => ({ name: claim, 'user-property': claim, mandatory: true })),
  };
}

function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Adapter, AdapterFactory, AdapterPayload } from 'oidc-provider';

/** Owner read/write only: registrations are not secrets, but they are nobody else's business either. */
const FILE_MODE = 0o600;
const DIRECTORY_MODE = 0o700;

async function readClients(file: string): Promise<Map<string, AdapterPayload>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw error;
  }
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`registered clients file ${file} is not a JSON object: delete it to start without registrations`);
  }
  return new Map(Object.entries(parsed as Record<string, AdapterPayload>));
}

/**
 * The development server's dynamically registered clients, kept in `file` so a restart does not answer
 * `invalid_client` to every client that cached its id. Only the Client model is kept: sessions, codes and tokens
 * stay in memory (a client signs in again, with the same registration). Each change rewrites the whole file, then
 * renames it into place: the file is never half-written.
 */
export async function withPersistentClients(factory: AdapterFactory, file: string): Promise<AdapterFactory> {
  const clients = await readClients(file);
  let writing = Promise.resolve();
  const save = () => {
    const snapshot = JSON.stringify(Object.fromEntries(clients));
    writing = writing.then(async () => {
      await mkdir(dirname(file), { recursive: true, mode: DIRECTORY_MODE });
      const draft = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      await writeFile(draft, snapshot, { mode: FILE_MODE });
      await rename(draft, file);
    });
    return writing;
  };
  return (model) => {
    const base = factory(model);
    if (model !== 'Client') return base;
    const adapter: Adapter = {
      ...base,
      find: async (id) => clients.get(id) ?? (await base.find(id)),
      upsert: async (id, payload) => {
        clients.set(id, payload);
        await save();
      },
      destroy: async (id) => {
        clients.delete(id);
        await save();
      },
    };
    return adapter;
  };
}

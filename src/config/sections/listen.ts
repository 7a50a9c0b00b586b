import { z } from 'zod';
import { bindHost, listenerPort } from '../fields.js';

/** `listen`: the main listener, where MCP clients and the metadata documents are served. */

export const listenSchema = z
  .strictObject({
    host: bindHost('0.0.0.0', 'Bind address.'),
    port: listenerPort(8080),
  })
  .prefault({})
  .describe('Where the gateway listens.');

export interface ListenSettings {
  readonly host: string;
  readonly port: number;
}

export function compileListen(raw: z.output<typeof listenSchema>): ListenSettings {
  return { host: raw.host, port: raw.port };
}

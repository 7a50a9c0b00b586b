/**
 * `npm run dev-auth-server`: the development authorization server for config/demo.yaml, auto-approving, with the
 * secrets that file references made up when the environment does not set them (as `npm run demo` does). For your
 * own routes: `mcp-auth-gateway dev-auth-server --config yours.yaml`.
 */
import { devAuthServerCommand } from '../src/authserver/command.js';
import { demoSecrets } from '../examples/demo/stack.js';

for (const [name, value] of Object.entries(await demoSecrets())) process.env[name] ??= value;
await devAuthServerCommand('config/demo.yaml', { autoApprove: true });

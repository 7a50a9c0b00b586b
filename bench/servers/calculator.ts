import { startCalculator } from '../../examples/calculator/server.js';

/** The example calculator (official MCP SDK) as a child process: the realistic upstream. */
const calculator = await startCalculator();
process.send?.({ type: 'ready', url: calculator.url });
process.on('SIGTERM', () => {
  void calculator.close().finally(() => process.exit(0));
});

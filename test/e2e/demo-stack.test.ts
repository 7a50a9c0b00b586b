import { describe, expect, it } from 'vitest';
import { startDemoStackOnFreePorts } from '../../examples/demo/stack.js';

describe('npm run demo', () => {
  it("logs at config/demo.yaml's log.level (info: audit lines show), not a level of its own", async () => {
    const stack = await startDemoStackOnFreePorts();
    try {
      expect(stack.config.logLevel).toBe('info');
      expect(stack.logger.level).toBe(stack.config.logLevel);
    } finally {
      await stack.close();
    }
  });
});

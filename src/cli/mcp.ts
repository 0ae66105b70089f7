import { defineCommand } from './command.js';

export default defineCommand({
  command: 'mcp',
  describe:
    'serve the memory to MCP clients over stdio (tools: search, context, add, get, update, verify, delete, rules, stale, sessions, review)',
  async run(_a, ctx) {
    // the MCP SDK and the server load only here, so other commands never pay for them
    const { serveMcp } = await import('../agents/mcp.js');
    await serveMcp(ctx);
    return 0;
  },
});

import { defineCommand } from './command.js';

export default defineCommand({
  command: 'mcp',
  describe:
    'serve the memory to MCP clients over stdio (tools: search, context, add, get, update, delete, rules, stale, sessions, review)',
  async run(_a, ctx) {
    // the MCP SDK and the server load only here, so other commands never pay for them
    const [{ serveMcp }, { VERSION }] = await Promise.all([import('../agents/mcp.js'), import('./main.js')]);
    await serveMcp(ctx, { version: VERSION });
    return 0;
  },
});

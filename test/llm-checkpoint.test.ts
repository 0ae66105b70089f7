/**
 * Tier 1 end to end: Claude Code hook payloads are buffered, the session-end
 * checkpoint asks a model (a local server speaking the OpenAI chat format) and
 * its facts land as pending proposals next to tier 0's, through the same gate.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo } from './helpers.js';

let server: Server;
let base = '';
let requests = 0;
let reply = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model: 'm',
          choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop' }],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('tier 1 through the checkpoint', () => {
  it('files the model facts as pending proposals; nothing when the model is off', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['init']);
    const session = 'sess-llm-1';
    const common = { session_id: session, transcript_path: '/tmp/t.jsonl', cwd: r.dir };
    const payloads = [
      { ...common, hook_event_name: 'UserPromptSubmit', prompt: 'make the integration tests pass' },
      {
        ...common,
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_use_id: 't1',
        tool_input: { command: 'npm run test:int' },
        tool_response: { stdout: '', stderr: 'error: relation "users" does not exist', exit_code: 1 },
      },
      {
        ...common,
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_use_id: 't2',
        tool_input: { command: 'npm run db:migrate && npm run test:int' },
        tool_response: { stdout: '12 passing', stderr: '', exit_code: 0 },
      },
    ];
    for (const p of payloads) {
      const res = await r.mem(['hook', 'claude-code'], { stdin: JSON.stringify(p) });
      expect(res.code).toBe(0);
    }
    reply = JSON.stringify({
      facts: [
        {
          type: 'known_fix',
          title: 'Run db:migrate before the integration tests',
          body: 'test:int fails with relation "users" does not exist until npm run db:migrate has run.',
          tags: ['testing'],
          confidence: 0.85,
        },
        { type: 'decision', title: 'Build succeeded', body: 'The build succeeded.' },
      ],
    });
    const env = { ...r.env, GIT_MEM_LLM_PROVIDER: 'openai', GIT_MEM_LLM_URL: base };
    const res = await r.mem(['checkpoint', '--session', session, '--final', '--json'], { env });
    expect(res.code).toBe(0);
    expect(requests).toBe(1);
    const pending = await r.memJson(['list', '--status', 'pending']);
    const titles = pending.map((p: { title: string }) => p.title);
    expect(titles).toContain('Run db:migrate before the integration tests');
    expect(titles).not.toContain('Build succeeded'); // the shared gate drops transient text
    const mine = pending.find(
      (p: { title: string }) => p.title === 'Run db:migrate before the integration tests',
    );
    const shown = await r.memJson(['show', mine.id]);
    expect(shown.extra.proposal.method).toBe('tier1:llm');
    expect(shown.status).toBe('pending');

    // another session without GIT_MEM_LLM_*: tier 1 stays off, no request leaves the machine
    for (const p of payloads) {
      expect(
        (await r.mem(['hook', 'claude-code'], { stdin: JSON.stringify({ ...p, session_id: 'sess-llm-2' }) }))
          .code,
      ).toBe(0);
    }
    expect((await r.mem(['checkpoint', '--session', 'sess-llm-2', '--final'])).code).toBe(0);
    expect(requests).toBe(1);

    // a checkpoint (a Stop's, a count's) read every event just before the session ended: the end
    // still asks the model, once, over the whole session
    for (const p of payloads)
      await r.mem(['hook', 'claude-code'], { stdin: JSON.stringify({ ...p, session_id: 'sess-llm-3' }) });
    const json = async (args: string[]) => JSON.parse((await r.mem([...args, '--json'], { env })).stdout);
    const mid = await json(['checkpoint', '--session', 'sess-llm-3']);
    expect(mid[0].new_events).toBe(3);
    expect(requests).toBe(1);
    reply = JSON.stringify({
      facts: [{ type: 'known_fix', title: 'Seed the users table first', body: 'x' }],
    });
    const end = await json(['checkpoint', '--session', 'sess-llm-3', '--final']);
    expect(end[0].new_events).toBe(0);
    expect(requests).toBe(2);
    expect(
      (await r.memJson(['list', '--status', 'pending'])).map((p: { title: string }) => p.title),
    ).toContain('Seed the users table first');
  });
});

// Scores tier-0 extraction on eval/extraction/cases.jsonl. Shared by run.mjs
// (`npm run eval:extraction`, on the bundled sources) and
// test/agents-extraction-eval.test.ts (on the TypeScript sources), so both
// measure the same thing. Each case's input is a prompt or a short sequence of
// steps; a step becomes the hook payload Claude Code sends (UserPromptSubmit,
// PostToolUse, PostToolUseFailure), goes through compactEvent as a real hook
// payload does, and the buffered events go to extractTier0.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const METHODS = ['correction', 'remember', 'error-fix'];
const SOURCE = { 'tier0:correction': 'correction', 'tier0:marker': 'remember', 'tier0:error_fix': 'error-fix' };

export function loadCases() {
  return readFileSync(join(here, 'cases.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** The hook payloads of one case, in order. */
export function payloadsOf(input, session = 'eval') {
  const steps = typeof input === 'string' ? [{ prompt: input }] : input;
  const base = { session_id: session, cwd: '/w', transcript_path: '/dev/null' };
  return steps.map((s, i) => {
    const id = `toolu_${i}`;
    if (s.prompt !== undefined) return { ...base, hook_event_name: 'UserPromptSubmit', prompt: s.prompt };
    if (s.edit !== undefined)
      return {
        ...base,
        hook_event_name: 'PostToolUse',
        tool_name: 'Edit',
        tool_use_id: id,
        tool_input: { file_path: s.edit, old_string: s.old, new_string: s.new },
        tool_response: { filePath: s.edit, oldString: s.old, newString: s.new },
      };
    if (s.fail)
      return {
        ...base,
        hook_event_name: 'PostToolUseFailure',
        tool_name: 'Bash',
        tool_use_id: id,
        tool_input: { command: s.bash },
        error: s.error,
      };
    return {
      ...base,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_use_id: id,
      tool_input: { command: s.bash },
      tool_response: { stdout: s.stdout ?? '', stderr: s.stderr ?? '', interrupted: false, isImage: false },
    };
  });
}

/** Runs every case; returns per-method precision/recall and the misses. */
export function score({ compactEvent, extractTier0 }, cases = loadCases()) {
  const m = Object.fromEntries(METHODS.map((k) => [k, { tp: 0, fp: 0, fn: 0, typeOk: 0 }]));
  const misses = [];
  for (const c of cases) {
    const events = payloadsOf(c.input).map((p) => compactEvent(p));
    const got = extractTier0(events, { root: '/w' });
    for (const k of METHODS) {
      const hit = got.find((g) => SOURCE[g.source] === k);
      const want = c.expected.proposal && c.expected.source === k;
      if (hit && want) {
        m[k].tp++;
        if (!c.expected.type || c.expected.type === hit.type) m[k].typeOk++;
      } else if (hit) {
        m[k].fp++;
        misses.push({ kind: 'fp', method: k, case: c, got: hit.type });
      } else if (want) {
        m[k].fn++;
        misses.push({ kind: 'fn', method: k, case: c });
      }
    }
  }
  for (const k of METHODS) {
    const x = m[k];
    x.precision = x.tp + x.fp ? x.tp / (x.tp + x.fp) : 1;
    x.recall = x.tp + x.fn ? x.tp / (x.tp + x.fn) : 1;
  }
  return { cases: cases.length, methods: m, misses };
}

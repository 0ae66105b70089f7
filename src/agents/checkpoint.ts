/**
 * Checkpoints (seed 004): every 10 buffered events, at a significant event
 * (a command passing after failing, a commit), on `git mem checkpoint` and at
 * the end of a session, extraction runs over the events not yet checkpointed
 * and its proposals enter the store as `pending`. A session that dies
 * unannounced still leaves its learning behind.
 */
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { git } from '../gitstore/git.js';
import type { Store } from '../gitstore/store.js';
import { agentProvenance } from '../model/provenance.js';
import type { MemoryRecord } from '../model/record.js';
import { redactRecord } from '../safety/secrets.js';
import {
  type AgentEvent,
  type CkptState,
  COMMIT_RE,
  commandOf,
  emptyCkpt,
  eventsDir,
  isShellTool,
  readEvents,
  readInjected,
  readJson,
  type SessionPaths,
  sessionPaths,
} from './events.js';
import { type CommitInfo, extractTier0 } from './extract.js';
import {
  type GateVerdict,
  gateProposalsDetailed,
  type Proposal,
  proposalKey,
  readRejectedKeys,
  writeProposals,
} from './proposal.js';
import {
  DEFAULT_KEEP_FULL,
  loadSettings,
  numberSetting,
  type SessionWrite,
  writeSessionSummary,
} from './sessions.js';
import { commitFromOutput, renderSummary, summarizeSession } from './summary.js';

export interface CheckpointOptions {
  trigger?: string;
  /** Session end (Stop / SessionEnd / finalize): also write the summary and try tier 1. */
  final?: boolean;
  agent?: string;
  /** Wait for a running checkpoint instead of skipping. */
  wait?: boolean;
}

export interface CheckpointResult {
  session: string;
  trigger: string;
  skipped?: 'locked' | 'no-events';
  events: number;
  newEvents: number;
  proposals: MemoryRecord[];
  verdicts: Array<{ title: string; source: string; accepted: boolean; reason?: string }>;
  summary?: { id: string; created: boolean; outcome: string; compressed: string[] };
  /** Consolidation proposals written at this session end (at most once a day). */
  consolidated?: number;
}

const LOCK_STALE_MS = 120_000;

function tryLock(file: string): boolean {
  try {
    closeSync(openSync(file, 'wx'));
    writeFileSync(file, String(process.pid));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    try {
      if (Date.now() - statSync(file).mtimeMs > LOCK_STALE_MS) {
        rmSync(file, { force: true });
        return tryLock(file);
      }
    } catch {}
    return false;
  }
}

async function lock(paths: SessionPaths, wait: boolean): Promise<boolean> {
  const deadline = Date.now() + (wait ? 20_000 : 0);
  for (;;) {
    if (tryLock(paths.lock)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Commit messages of the commits the session made (from `git commit` output, read with git). */
async function sessionCommits(store: Store, events: AgentEvent[]): Promise<CommitInfo[]> {
  const out: CommitInfo[] = [];
  const cwd = store.repo.workTree ?? store.repo.cwd;
  for (let i = 0; i < events.length; i++) {
    const ev = events[i];
    if (!isShellTool(ev.tool) || ev.exit !== 0) continue;
    const cmd = commandOf(ev);
    if (!cmd || !COMMIT_RE.test(cmd)) continue;
    const c = commitFromOutput(String((ev.response as { stdout?: unknown })?.stdout ?? ''));
    if (!c) continue;
    const r = await git(['show', '-s', '--format=%H%x00%B', c.sha], {
      cwd,
      env: store.repo.env,
      allowFail: true,
    });
    if (r.code !== 0) continue;
    const [sha, message] = r.stdout.toString('utf8').split('\0');
    out.push({ sha: sha.trim(), message: (message ?? '').trim(), at: i });
  }
  return out;
}

async function injectedTexts(store: Store, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  const cat = await store.catalog();
  const entries = ids.map((id) => cat.entries.get(id)).filter((e) => !!e);
  const blobs = await store.catFile.readMany(entries.map((e) => e.oid));
  return entries.flatMap((e, i) => [e.title, blobs[i]?.content.toString('utf8') ?? '']);
}

async function tier1(store: Store, events: AgentEvent[], root: string | undefined): Promise<Proposal[]> {
  try {
    const mod = await import('./llm-extract.js');
    // only the settings this machine's user controls: the shared config travels in refs/memory,
    // and whoever can push it must not be able to send session events to their own server
    const settings = await mod.trustedLlmSettings(store);
    const summaryText = renderSummary(summarizeSession(events, { root }));
    const res = await mod.llmExtract({ events, summaryText }, settings, store.repo.env);
    return Array.isArray(res) ? res.map((p) => ({ ...p, source: p.source || 'tier1:llm' }) as Proposal) : [];
  } catch {
    return [];
  }
}

export async function runCheckpoint(
  store: Store,
  sessionId: string,
  opts: CheckpointOptions = {},
): Promise<CheckpointResult> {
  const paths = sessionPaths(store.repo.commonDir, sessionId);
  const trigger = opts.trigger ?? (opts.final ? 'session-end' : 'manual');
  const result: CheckpointResult = {
    session: sessionId,
    trigger,
    events: 0,
    newEvents: 0,
    proposals: [],
    verdicts: [],
  };
  if (!existsSync(paths.events)) return { ...result, skipped: 'no-events' };
  if (!(await lock(paths, !!opts.wait || !!opts.final))) return { ...result, skipped: 'locked' };
  const actor = store.actor;
  try {
    // redacted before anything is derived from them: a summary or a proposal clips text, and a
    // clipped secret is no longer recognisable
    const events = redactRecord(readEvents(paths.events));
    // what this session writes is the agent's: its name, this session, its model when it said
    const model = events.findLast((e) => e.model)?.model;
    store.actor = agentProvenance(opts.agent ?? 'claude-code', sessionId, model);
    const ckpt = readJson<CkptState>(paths.ckpt, emptyCkpt());
    result.events = events.length;
    result.newEvents = Math.max(0, events.length - ckpt.total);
    const root = store.repo.workTree;
    const candidates: Proposal[] = [];
    if (result.newEvents > 0) {
      const commits = await sessionCommits(store, events);
      candidates.push(
        ...extractTier0(events, { since: ckpt.total, root, commits }).sort(
          (a, b) => (b.confidence ?? 0) - (a.confidence ?? 0) || a.at - b.at,
        ),
      );
    }
    // tier 1 (an LLM call) once per session, at its end, over all its events, not at every Stop of
    // every turn; also when a Stop's checkpoint just before had read every event already
    const llm = !!opts.final && trigger !== 'stop' && events.length > (ckpt.tier1Total ?? 0);
    if (llm) {
      candidates.push(...(await tier1(store, events, root)));
      ckpt.tier1Total = events.length;
    }
    if (result.newEvents > 0 || llm) {
      let verdicts: GateVerdict[] = [];
      if (candidates.length) {
        verdicts = await gateProposalsDetailed(store, candidates, {
          alreadyProposed: ckpt.proposed,
          injected: await injectedTexts(store, readInjected(paths)),
          rejectedKeys: readRejectedKeys(store),
          seenKeys: ckpt.keys,
        });
        const accepted = verdicts.filter((v) => v.accepted).map((v) => v.proposal);
        result.proposals = await writeProposals(store, accepted, {
          session: sessionId,
          agent: opts.agent ?? 'claude-code',
          model,
        });
      }
      result.verdicts = verdicts.map((v) => ({
        title: v.proposal.title,
        source: v.proposal.source,
        accepted: v.accepted,
        reason: v.reason,
      }));
      ckpt.proposed += result.proposals.length;
      ckpt.keys = [
        ...new Set([
          ...ckpt.keys,
          ...verdicts.filter((v) => v.reason !== 'cap').map((v) => proposalKey(v.proposal)),
        ]),
      ];
      if (result.newEvents > 0) {
        ckpt.total = events.length;
        ckpt.checkpoints += 1;
      }
    }
    if (opts.final && events.length > (ckpt.summaryTotal ?? 0)) {
      const settings = await loadSettings(store);
      const w: SessionWrite | undefined = await writeSessionSummary(store, events, {
        root,
        agent: opts.agent ?? 'claude-code',
        model,
        keepFull: numberSetting(settings, 'sessions-keep-full', DEFAULT_KEEP_FULL),
      });
      if (w) {
        ckpt.summaryId = w.record.id;
        ckpt.summaryTotal = events.length;
        result.summary = {
          id: w.record.id,
          created: w.created,
          outcome: w.summary.outcome,
          compressed: w.compressed,
        };
      }
    }
    writeFileSync(paths.ckpt, JSON.stringify(ckpt), { mode: 0o600 });
    if (opts.final) rmSync(paths.end, { force: true });
    // the session is over and its extraction done: the raw events (tool output, prompts) go
    // (a Stop ends a turn, not the session: its buffer stays for the rest of the session)
    if (opts.final && trigger !== 'stop') dropBuffer(paths);
    // at a session's end, at most once a day: proposals to merge, supersede or archive (never fails the end)
    if (opts.final && trigger !== 'stop') {
      try {
        const { consolidateDaily } = await import('./consolidate.js');
        const c = await consolidateDaily(store, await loadSettings(store));
        if (c?.commit) result.consolidated = c.proposals.filter((p) => p.state === 'new').length;
      } catch {}
    }
    return result;
  } finally {
    store.actor = actor;
    rmSync(paths.lock, { force: true });
  }
}

/**
 * Deletes a session's local buffer: its events and the state derived from them
 * (the lock stays to its owner). The list of memory ids injected into the
 * session stays (no session text; a resumed session is not given them again);
 * recoverSessions deletes it with the old buffers.
 */
function dropBuffer(paths: SessionPaths): void {
  for (const f of [paths.events, paths.state, paths.ckpt, paths.end]) rmSync(f, { force: true });
}

/** Injected-id lists of ended sessions (their events are gone) older than `before`. */
function dropOldInjected(commonDir: string, before: number): void {
  const dir = eventsDir(commonDir);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (!n.endsWith('.injected') || names.includes(`${n.slice(0, -9)}.jsonl`)) continue;
    try {
      if (statSync(join(dir, n)).mtimeMs < before) rmSync(join(dir, n), { force: true });
    } catch {}
  }
}

/** Sessions with buffered events, most recently active first. */
export function bufferedSessions(
  commonDir: string,
): Array<{ session: string; file: string; mtimeMs: number; ended: boolean }> {
  const dir = eventsDir(commonDir);
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: Array<{ session: string; file: string; mtimeMs: number; ended: boolean }> = [];
  for (const n of names) {
    if (!n.endsWith('.jsonl')) continue;
    const file = join(dir, n);
    let session = n.slice(0, -6);
    try {
      // the real session id is in the events (the file name may be a hash of it)
      const first = readFileSync(file, 'utf8').split('\n', 1)[0];
      session = JSON.parse(first).session ?? session;
    } catch {}
    out.push({
      session,
      file,
      mtimeMs: statSync(file).mtimeMs,
      ended: existsSync(join(dir, `${n.slice(0, -6)}.end`)),
    });
  }
  return out.sort((a, b) => b.mtimeMs - a.mtimeMs);
}

/** Cheap test (no event file read): is there a session to finish or a buffer to delete? */
export function needsRecovery(
  commonDir: string,
  currentSession: string | undefined,
  now = Date.now(),
  idleMs = 30 * 60_000,
  keepDays = 14,
): boolean {
  for (const s of bufferedSessions(commonDir)) {
    if (s.session === currentSession) continue;
    const paths = sessionPaths(commonDir, s.session);
    const age = now - s.mtimeMs;
    if (s.ended && age > 10_000) return true;
    const total = readJson<{ total: number }>(paths.state, { total: 0 }).total;
    const done = readJson<CkptState>(paths.ckpt, emptyCkpt()).summaryTotal ?? 0;
    if (age > keepDays * 86_400_000) return true;
    if (age > idleMs && done < total) return true;
  }
  return false;
}

/**
 * Recovery at session start: a session whose end was never written (the
 * detached finaliser died, or the agent never sent SessionEnd and has been
 * quiet for `idleMs`) gets its summary now. Old buffers are deleted.
 */
export async function recoverSessions(
  store: Store,
  currentSession: string | undefined,
  opts: { idleMs?: number; max?: number; keepDays?: number } = {},
) {
  const idle = opts.idleMs ?? 30 * 60_000;
  const now = Date.now();
  const done: string[] = [];
  dropOldInjected(store.repo.commonDir, now - (opts.keepDays ?? 14) * 86_400_000);
  for (const s of bufferedSessions(store.repo.commonDir)) {
    if (s.session === currentSession) continue;
    const paths = sessionPaths(store.repo.commonDir, s.session);
    const ckpt = readJson<CkptState>(paths.ckpt, emptyCkpt());
    const events = readEvents(paths.events).length;
    const age = now - s.mtimeMs;
    if (age > (opts.keepDays ?? 14) * 86_400_000 && (ckpt.summaryTotal ?? 0) >= events) {
      for (const f of Object.values(paths)) if (f !== paths.dir) rmSync(f, { force: true });
      continue;
    }
    if (done.length >= (opts.max ?? 2)) continue;
    const pendingEnd = s.ended && age > 10_000;
    if (pendingEnd || (age > idle && (ckpt.summaryTotal ?? 0) < events)) {
      await runCheckpoint(store, s.session, { final: true, trigger: 'recovery' });
      done.push(s.session);
    }
  }
  return done;
}

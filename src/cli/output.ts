/**
 * Colour and the pager, decided as git decides them: colour only on a terminal
 * (or into git's own pager), never with NO_COLOR or --no-color; long listings
 * (list, history, search) go through GIT_PAGER, core.pager, PAGER or less, only
 * when stdout is a terminal and not with --no-pager.
 */
import { spawn } from 'node:child_process';
import type { Ctx, IO } from './context.js';

/** The commands whose human output is paged. */
const PAGED = new Set(['list', 'history', 'search']);

export interface Colors {
  /** ids and commits (yellow, as git log shows them) */
  id(s: string): string;
  /** statuses and flags that need a look (red) */
  warn(s: string): string;
  /** secondary text (dim) */
  dim(s: string): string;
}

const sgr = (code: string) => (s: string) => (s ? `\x1b[${code}m${s}\x1b[m` : s);
const same = (s: string) => s;
export const plain: Colors = { id: same, warn: same, dim: same };
const ansi: Colors = { id: sgr('33'), warn: sgr('31'), dim: sgr('2') };

/** Whether this run colours its output. */
export function colorWanted(argv: readonly string[], env: NodeJS.ProcessEnv, io: IO): boolean {
  const i = argv.lastIndexOf('--color');
  const j = argv.lastIndexOf('--no-color');
  // a flag on the command line wins over NO_COLOR (https://no-color.org)
  if (j > i) return false;
  if (i > j) return true;
  if (env.NO_COLOR) return false;
  if (env.TERM === 'dumb') return false;
  return io.isTTY || !!env.GIT_PAGER_IN_USE;
}

export const colors = (ctx: Pick<Ctx, 'color'>): Colors => (ctx.color ? ansi : plain);

/** The pager git would use, or undefined for none (as git: empty or "cat" means none). */
async function pagerCommand(ctx: Ctx): Promise<string | undefined> {
  let p = ctx.env.GIT_PAGER;
  if (p === undefined) {
    const { git } = await import('../gitstore/git.js');
    p = await git(['config', '--get', 'core.pager'], { cwd: ctx.cwd, env: ctx.env }).then(
      (r) => (r.code === 0 ? r.stdout.toString('utf8').replace(/\n$/, '') : undefined),
      () => undefined,
    );
  }
  p ??= ctx.env.PAGER ?? 'less';
  return p && p !== 'cat' ? p : undefined;
}

/**
 * For a paged command on a terminal: replaces ctx.io's stdout with a buffer and
 * returns the function that shows it (directly when it fits the screen, else
 * through the pager) once the command ends. Undefined when nothing is paged.
 */
export function startPager(
  ctx: Ctx,
  command: string | undefined,
  argv: readonly string[],
): (() => Promise<void>) | undefined {
  const io = ctx.io;
  if (!command || !PAGED.has(command) || !io.isTTY || ctx.json || ctx.yaml) return undefined;
  if (argv.includes('--no-pager') || ctx.env.GIT_PAGER_IN_USE) return undefined;
  let text = '';
  ctx.io = {
    ...io,
    out: (s) => {
      text += s;
    },
    outBytes: undefined,
  };
  let done = false;
  return async () => {
    ctx.io = io;
    if (done || !text) return;
    done = true;
    const lines = text.split('\n').length - 1;
    const cmd = lines >= (io.rows ?? 24) ? await pagerCommand(ctx) : undefined;
    if (!cmd) return io.out(text);
    // what git sets for its pager: less quits on one screen, keeps colours, leaves the screen alone
    const env = { ...ctx.env, LESS: ctx.env.LESS ?? 'FRX', LV: ctx.env.LV ?? '-c', GIT_PAGER_IN_USE: 'true' };
    const shown = await new Promise<boolean>((resolve) => {
      const child = spawn('sh', ['-c', cmd], { cwd: ctx.cwd, env, stdio: ['pipe', 'inherit', 'inherit'] });
      child.on('error', () => resolve(false));
      child.stdin.on('error', () => {}); // the reader quit early (q in less)
      child.on('close', () => resolve(true));
      child.stdin.end(text);
    });
    if (!shown) io.out(text);
  };
}

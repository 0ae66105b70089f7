/**
 * Colour and the pager, decided as git decides them: colour only on a terminal
 * (or into git's own pager), never with NO_COLOR or --no-color, and as color.mem
 * or color.ui say (always, never, auto; `git -c color.ui=never mem list`); long listings
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

/** What --color / --no-color say (the last one wins), or undefined when neither is given. */
function colorFlag(argv: readonly string[]): boolean | undefined {
  const i = argv.lastIndexOf('--color');
  const j = argv.lastIndexOf('--no-color');
  if (j > i) return false;
  if (i > j) return true;
  return undefined;
}

/** A colour setting as git reads it (color.c, git_config_colorbool): true is auto, false is never. */
export type ColorSetting = 'always' | 'never' | 'auto';
export function colorSetting(value: string): ColorSetting | undefined {
  const v = value.trim().toLowerCase();
  if (v === 'always' || v === 'never' || v === 'auto') return v;
  if (['true', 'yes', 'on', '1', ''].includes(v)) return 'auto';
  if (['false', 'no', 'off', '0'].includes(v)) return 'never';
  return undefined;
}

/**
 * Whether this run colours its output, as git decides: --color / --no-color first, then the
 * setting (color.mem, else color.ui: always or never; an explicit setting wins over NO_COLOR,
 * as https://no-color.org asks), then NO_COLOR, then auto: a terminal (not TERM=dumb) or git's pager.
 */
export function colorWanted(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: IO,
  setting?: ColorSetting,
): boolean {
  const flag = colorFlag(argv);
  if (flag !== undefined) return flag;
  if (setting === 'always') return true;
  if (setting === 'never') return false;
  if (env.NO_COLOR) return false;
  if (env.TERM === 'dumb') return false;
  return io.isTTY || !!env.GIT_PAGER_IN_USE;
}

/** The commands whose human output has colour: the only ones that read git's colour settings. */
const COLOURED = new Set(['list', 'show', 'history', 'blame']);

/**
 * Reads color.mem and color.ui from git (every config file, include and `git -c`, which reaches
 * this process as GIT_CONFIG_PARAMETERS) and decides ctx.color with them: one `git config`, run
 * only for a command that colours, printing for a person, with no --color/--no-color given.
 */
export async function settleColor(
  ctx: Ctx,
  command: string | undefined,
  argv: readonly string[],
): Promise<void> {
  if (!command || !COLOURED.has(command) || ctx.json || ctx.yaml || colorFlag(argv) !== undefined) return;
  const { git } = await import('../gitstore/git.js');
  const r = await git(['config', '-z', '--get-regexp', '^color\\.(mem|ui)$'], {
    cwd: ctx.cwd,
    env: ctx.env,
    allowFail: true,
  }).catch(() => undefined);
  if (!r) return;
  // key LF value NUL, in git's order (the last value of a key wins); a key alone is a boolean true
  const seen: Record<string, string> = {};
  for (const kv of r.stdout.toString('utf8').split('\0')) {
    if (!kv) continue;
    const nl = kv.indexOf('\n');
    seen[nl < 0 ? kv : kv.slice(0, nl)] = nl < 0 ? 'true' : kv.slice(nl + 1);
  }
  const raw = seen['color.mem'] ?? seen['color.ui'];
  const setting = raw === undefined ? undefined : colorSetting(raw);
  ctx.color = colorWanted(argv, ctx.env, ctx.io, setting);
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

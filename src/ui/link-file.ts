import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A file that sends the browser on to `url` (a one-time link), readable by this user alone: the
 * browser is started with its path, so no process's arguments (what `ps` shows every user) hold
 * the link. Removed once the server stops.
 */
export function linkFile(url: string): { path: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'git-mem-ui-'));
  const path = join(dir, 'open.html');
  const html = `<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${url}"><title>git mem ui</title><a href="${url}">git mem ui</a>\n`;
  writeFileSync(path, html, { mode: 0o600 });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The small pieces every handler of the language server shares: reading a request's params, the
 * LSP errors a bad one gets, and the answer of "open in the UI" without the editor's help.
 */
import { isGitMemError } from '../errors.js';
import { ErrorCodes, ResponseError } from './rpc.js';

/** "Open in the UI" for an editor that cannot show a document: the command to run (docs/lsp.md). */
export function openCommand(id: string): { command: string; route: string; message: string } {
  const route = `#/m/${id}`;
  return {
    command: 'git mem ui --open',
    route,
    message: `git-mem: run \`git mem ui --open\` in a terminal, then open ${route} in that page (memory ${id.slice(0, 12)})`,
  };
}

export const str = (x: unknown): string => (typeof x === 'string' ? x : '');
export const int = (x: unknown): number | null =>
  typeof x === 'number' && Number.isInteger(x) && x >= 0 ? x : null;

export function bad(what: string): never {
  throw new ResponseError(ErrorCodes.InvalidParams, what);
}

export function asResponse(e: unknown): never {
  if (e instanceof ResponseError) throw e;
  if (isGitMemError(e))
    throw new ResponseError(ErrorCodes.RequestFailed, e.toLine(), { code: e.code, hint: e.hint });
  throw e;
}

/**
 * GIT_MEM_TRACE=1: timing marks on stderr (milliseconds since the process
 * started), like git's GIT_TRACE_PERFORMANCE. For finding where a command's
 * time goes; silent and nearly free otherwise.
 */
const on = !!process.env.GIT_MEM_TRACE;

export function mark(label: string): void {
  if (on) process.stderr.write(`git-mem trace: ${performance.now().toFixed(1)} ms ${label}\n`);
}

if (on) process.on('exit', () => mark('exit'));

/**
 * Timing marks for profiling the post-commit hook and checks: with
 * GIT_MEM_TIMING=1 each mark prints the milliseconds since the process
 * started and the process's CPU time (each with the change since the previous
 * mark) on stderr. Off, a mark costs nothing (not even loading perf_hooks).
 */
const on = !!process.env.GIT_MEM_TIMING;
let last = 0;
let lastCpu = 0;

export function mark(label: string): void {
  if (!on) return;
  const t = process.uptime() * 1000;
  const u = process.cpuUsage();
  const cpu = (u.user + u.system) / 1000;
  process.stderr.write(
    `[timing] ${t.toFixed(1).padStart(7)} ms (+${(t - last).toFixed(1)}) cpu ${cpu.toFixed(0)} (+${(cpu - lastCpu).toFixed(1)}) ${label}\n`,
  );
  last = t;
  lastCpu = cpu;
}

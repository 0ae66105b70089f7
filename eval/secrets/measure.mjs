// The secret scanner's measurement, shared by eval/secrets/run.mjs (which runs
// the built scanner) and test/secrets-eval.test.ts (which runs src/ under
// vitest): recall on the generated positives, the false-positive line rate on
// the negatives (real files from public repositories, eval/secrets/negatives/),
// and the time to scan 100 KB of real code.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { positives } from './positives.mjs';

export const NEGATIVES = fileURLToPath(new URL('negatives/', import.meta.url));

/**
 * Lines of the negatives that do hold a secret-shaped literal (an example's hardcoded password, a
 * token in a demo's output): file:line, then why. They count neither as negatives nor as positives.
 */
export function labelledSecrets(dir = NEGATIVES) {
  const out = new Map();
  for (const l of readFileSync(join(dir, 'LABELLED'), 'utf8').split('\n')) {
    const m = /^(\S+):(\d+)\s+(.*)$/.exec(l);
    if (m) out.set(`${m[1]}:${m[2]}`, m[3]);
  }
  return out;
}

/** Every negative file (name relative to negatives/, text), in a stable order. */
export function negativeFiles(dir = NEGATIVES) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.txt')) out.push({ name: p.slice(dir.length), text: readFileSync(p, 'utf8') });
    }
  };
  walk(dir);
  return out;
}

/**
 * Runs the scanner on the corpus. A positive is found when scanSecrets reports
 * something and redactText leaves none of the secret; a negative line is a
 * false positive when the scanner flags it, either as part of its whole file
 * (as anchored files are scanned) or alone (as a note quoting it is).
 */
export function measure({ scanSecrets, redactText }) {
  const pos = positives();
  const byFormat = new Map();
  const misses = [];
  for (const p of pos) {
    const f = byFormat.get(p.format) ?? { n: 0, found: 0 };
    byFormat.set(p.format, f);
    f.n++;
    // every line of a multi-line secret (a key's body) must be gone
    const red = redactText(p.text);
    const pieces = p.secret.split('\n').filter((x) => x.length >= 8);
    const found = scanSecrets(p.text).length > 0 && !pieces.some((x) => red.includes(x));
    if (found) f.found++;
    else misses.push(p);
  }
  const files = negativeFiles();
  const labelled = labelledSecrets();
  let lines = 0;
  const falsePositives = [];
  for (const file of files) {
    const all = file.text.split('\n');
    const flagged = new Map();
    for (const f of scanSecrets(file.text)) flagged.set(f.line, f.kind);
    all.forEach((line, i) => {
      if (!line.trim() || labelled.has(`${file.name}:${i + 1}`)) return;
      lines++;
      const kind = flagged.get(i + 1) ?? scanSecrets(line)[0]?.kind;
      if (kind) falsePositives.push({ file: file.name, line: i + 1, kind, text: line.slice(0, 160) });
    });
  }
  const found = pos.length - misses.length;
  return {
    positives: pos.length,
    formats: byFormat.size,
    found,
    recall: found / pos.length,
    byFormat: [...byFormat].map(([format, f]) => ({ format, ...f, recall: f.found / f.n })),
    misses,
    negativeFiles: files.length,
    negativeLines: lines,
    labelled: labelled.size,
    falsePositives,
    fpRate: falsePositives.length / lines,
  };
}

/**
 * The time to scan about 100 KB of the negatives: the median wall time of `runs` scans, and the
 * mean CPU time of this process per scan (steadier on a shared machine).
 */
export function timeScan(scanSecrets, runs = 15) {
  let text = '';
  for (const f of negativeFiles()) {
    if (text.length >= 100_000) break;
    text += `${f.text}\n`;
  }
  text = text.slice(0, 100_000);
  for (let i = 0; i < 3; i++) scanSecrets(text); // warm up the regular expressions
  const times = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    scanSecrets(text);
    times.push(performance.now() - t);
  }
  const used = process.cpuUsage(cpu);
  times.sort((a, b) => a - b);
  return { bytes: text.length, ms: times[Math.floor(runs / 2)], cpuMs: (used.user + used.system) / 1000 / runs };
}

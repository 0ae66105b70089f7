// Types for eval/secrets/measure.mjs, so test/secrets-eval.test.ts type-checks.
export interface Positive {
  format: string;
  text: string;
  secret: string;
}
export interface Scanner {
  scanSecrets(text: string): Array<{ kind: string; line: number }>;
  redactText(text: string): string;
}
export interface Measurement {
  positives: number;
  formats: number;
  found: number;
  recall: number;
  byFormat: Array<{ format: string; n: number; found: number; recall: number }>;
  misses: Positive[];
  negativeFiles: number;
  negativeLines: number;
  labelled: number;
  falsePositives: Array<{ file: string; line: number; kind: string; text: string }>;
  fpRate: number;
}
export const NEGATIVES: string;
export function labelledSecrets(dir?: string): Map<string, string>;
export function negativeFiles(dir?: string): Array<{ name: string; text: string }>;
export function measure(scanner: Scanner): Measurement;
export function timeScan(scanSecrets: Scanner['scanSecrets'], runs?: number): { bytes: number; ms: number; cpuMs: number };

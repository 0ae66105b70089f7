export const METHODS: Array<'correction' | 'remember' | 'error-fix'>;
export interface ExtractionCase {
  method: 'correction' | 'remember' | 'error-fix' | 'none';
  input: string | Array<Record<string, unknown>>;
  expected: { proposal: boolean; source?: string; type?: string };
  note?: string;
}
export interface MethodScore {
  tp: number;
  fp: number;
  fn: number;
  typeOk: number;
  precision: number;
  recall: number;
}
export function loadCases(): ExtractionCase[];
export function payloadsOf(input: ExtractionCase['input'], session?: string): Array<Record<string, unknown>>;
export function score(
  fns: {
    compactEvent: (p: Record<string, unknown>) => unknown;
    // biome-ignore lint/suspicious/noExplicitAny: the events of src/agents/events.ts
    extractTier0: (events: any[], opts?: { root?: string }) => Array<{ source: string; type: string }>;
  },
  cases?: ExtractionCase[],
): {
  cases: number;
  methods: Record<string, MethodScore>;
  misses: Array<{ kind: 'fp' | 'fn'; method: string; case: ExtractionCase; got?: string }>;
};

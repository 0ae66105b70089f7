/**
 * What a test file leaves behind, undone when the test or the file ends: open stores after each
 * test, scratch folders and the templates made in them after the file. Unit and ops files share
 * their workers (vitest.config.ts: `isolate: false`), so shared helpers load once per worker: a
 * module-level afterAll in them would run for the first file only. The setup file
 * (test/support/setup-file.ts) runs these for every file instead.
 */
const testEnd: Array<() => void> = [];
const fileEnd: Array<() => void> = [];
const inFlight: Array<Promise<unknown>> = [];

/** `fn` runs once the current test ends (before the file's). */
export function atTestEnd(fn: () => void): void {
  testEnd.push(fn);
}

/** `fn` runs once the current test file ends. */
export function atFileEnd(fn: () => void): void {
  fileEnd.push(fn);
}

/**
 * Work the file started that may outlive its tests (a template built for a test that a filter
 * left out): the file's end waits for it to settle before it removes anything, so nothing is
 * still writing into a folder as it goes. Its failure is the business of whoever awaits it.
 */
export function settleBeforeFileEnd(p: Promise<unknown>): void {
  p.catch(() => {});
  inFlight.push(p);
}

function drain(list: Array<() => void>): void {
  for (const fn of list.splice(0)) {
    try {
      fn();
    } catch {}
  }
}

export const testEnded = (): void => drain(testEnd);
export const fileEnded = async (): Promise<void> => {
  await Promise.allSettled(inFlight.splice(0));
  drain(fileEnd);
};

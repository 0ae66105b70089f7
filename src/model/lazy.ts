/**
 * Synchronous, on-first-use loading of libraries that most one-shot commands
 * never need (yaml, micromatch). The build writes each as one CommonJS file
 * beside the bundle (dist/<name>.cjs), so loading is one small file read; from
 * sources (tests) the package itself is required.
 */
import { createRequire } from 'node:module';

const cache = new Map<string, unknown>();

export function lazyRequire<T>(name: string): T {
  let mod = cache.get(name);
  if (!mod) {
    const req = createRequire(import.meta.url);
    try {
      mod = req(`./${name}.cjs`);
    } catch {
      mod = req(name);
    }
    cache.set(name, mod);
  }
  return mod as T;
}

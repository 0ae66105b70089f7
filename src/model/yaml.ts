/**
 * The yaml library, in one place: what the model's codec and the config files
 * use. Loaded on first use (scripts/build.mjs keeps it out of the bundle): a
 * command that never parses or writes YAML (`list` from the catalog cache,
 * `--version`, the agent hooks' fast path) does not pay for compiling it.
 */
import { createRequire } from 'node:module';

/** In the build: the library bundled into one file beside the chunks (one file loads in half the time). */
declare const __GIT_MEM_VENDOR__: Record<string, string> | undefined;

type Yaml = typeof import('yaml');
let lib: Yaml | undefined;
const yaml = (): Yaml => {
  const at = typeof __GIT_MEM_VENDOR__ === 'object' ? __GIT_MEM_VENDOR__.yaml : 'yaml';
  lib ??= createRequire(import.meta.url)(at) as Yaml;
  return lib;
};

export const parse: Yaml['parse'] = ((...a: Parameters<Yaml['parse']>) =>
  yaml().parse(...a)) as Yaml['parse'];
export const parseDocument: Yaml['parseDocument'] = ((...a: Parameters<Yaml['parseDocument']>) =>
  yaml().parseDocument(...a)) as Yaml['parseDocument'];
export const stringify: Yaml['stringify'] = ((...a: Parameters<Yaml['stringify']>) =>
  yaml().stringify(...a)) as Yaml['stringify'];

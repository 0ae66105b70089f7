/**
 * The yaml library, in one place: what the model's codec and the config files
 * use. Loaded on first use (scripts/build.mjs keeps it out of the bundle): a
 * command that never parses or writes YAML (`list` from the catalog cache,
 * `--version`, the agent hooks' fast path) does not pay for compiling it.
 */
import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');
let lib: Yaml | undefined;
const yaml = (): Yaml => {
  lib ??= createRequire(import.meta.url)('yaml') as Yaml;
  return lib;
};

export const parse: Yaml['parse'] = ((...a: Parameters<Yaml['parse']>) =>
  yaml().parse(...a)) as Yaml['parse'];
export const parseDocument: Yaml['parseDocument'] = ((...a: Parameters<Yaml['parseDocument']>) =>
  yaml().parseDocument(...a)) as Yaml['parseDocument'];
export const stringify: Yaml['stringify'] = ((...a: Parameters<Yaml['stringify']>) =>
  yaml().stringify(...a)) as Yaml['stringify'];

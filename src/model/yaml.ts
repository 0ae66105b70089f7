/**
 * The yaml library, loaded on first use (see lazy.ts): 260 KB of code that
 * most one-shot commands never need, since git-mem's own records go through
 * the fast codec in fastyaml.ts.
 */
import type * as Yaml from 'yaml';
import { lazyRequire } from './lazy.js';

const lib = () => lazyRequire<typeof Yaml>('yaml');

export const parse: typeof Yaml.parse = ((...args: Parameters<typeof Yaml.parse>) =>
  lib().parse(...args)) as typeof Yaml.parse;
export const stringify: typeof Yaml.stringify = ((...args: Parameters<typeof Yaml.stringify>) =>
  lib().stringify(...args)) as typeof Yaml.stringify;
export const parseDocument: typeof Yaml.parseDocument = ((...args: Parameters<typeof Yaml.parseDocument>) =>
  lib().parseDocument(...args)) as typeof Yaml.parseDocument;

/**
 * The yaml library, loaded on first use (see lazy.ts): 260 KB of code that
 * one-shot commands answered from the caches (list, the catalog) never need.
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

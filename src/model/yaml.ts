/**
 * The yaml library, in one place: what the model's codec and the config files use.
 */
export { parse, parseDocument, stringify } from 'yaml';

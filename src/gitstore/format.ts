/**
 * The store's format, checked before a write: a store without FORMAT gets one, a store written
 * by a newer format is refused (E_FORMAT). Every writer of refs/memory calls it in its change.
 */
import { err } from '../errors.js';
import { parse as parseYaml } from '../model/yaml.js';
import { FORMAT_PATH, FORMAT_TEXT, FORMAT_VERSION, type Tx } from './store.js';

/** Reads FORMAT at the base and refuses stores written by a newer format. */
export async function ensureFormat(tx: Tx): Promise<void> {
  const buf = await tx.store.readPath(tx.base, FORMAT_PATH);
  if (!buf) {
    tx.put(FORMAT_PATH, FORMAT_TEXT);
    return;
  }
  // the file as this version writes it (nearly always): no need to load the yaml library for it
  const text = buf.toString('utf8');
  let version = FORMAT_VERSION;
  if (text !== FORMAT_TEXT) {
    version = Number.NaN;
    try {
      version = Number((parseYaml(text) as { format?: unknown })?.format);
    } catch {}
  }
  if (!(version >= 1))
    throw err('E_FORMAT', 'refs/memory has an unreadable FORMAT file', 'run git mem doctor');
  if (version > FORMAT_VERSION) {
    throw err(
      'E_FORMAT',
      `refs/memory uses store format ${version}; this git-mem reads format ${FORMAT_VERSION}`,
      'upgrade git-mem',
    );
  }
}

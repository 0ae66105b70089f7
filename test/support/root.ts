import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root (no git, no processes: the unit tier may import this). */
export const ROOT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

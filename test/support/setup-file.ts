// Runs before every test file, in every tier (vitest.config.ts setupFiles): the per-file
// clean-up of test/support/per-file.ts. Registered first, so its afterAll runs after the file's own.
import { afterAll, afterEach } from 'vitest';
import { fileEnded, testEnded } from './per-file.js';

afterEach(testEnded);
afterAll(fileEnded);

// Entry point bundled by bench/codec.bench.mjs: the record codec as it is, and the pieces the
// alternatives are made of (the yaml library alone; JSON flow values).
export {
  BLOCK_OPTIONS,
  frontmatterOf,
  newRecord,
  parseRecord,
  readFrontmatterByLibrary,
  readFrontmatterFast,
  recordFromParts,
  serializeRecord,
  splitFrontmatter,
} from '../src/model/record.js';
export { newId } from '../src/model/id.js';
export { stringify } from '../src/model/yaml.js';

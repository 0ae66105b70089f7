// The systems the staleness benchmark compares, in table order. Adding a tool: one file in this
// folder exporting {name, source, judge(ctx)} (see ../README.md, "Adding a system"), listed here.
import blame from './blame.mjs';
import exactText from './exact-text.mjs';
import fileHash from './file-hash.mjs';
import gitMem from './git-mem.mjs';
import lineNumbers from './line-numbers.mjs';
import memcite from './memcite.mjs';

export const ADAPTERS = [lineNumbers, fileHash, exactText, memcite, blame, gitMem];

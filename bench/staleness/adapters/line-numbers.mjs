// Line numbers only: the memory cites path:start-end and is served as it is while the file exists
// (no content check). What a memory that stores a plain citation gets without verification.
export default {
  name: 'line-numbers',
  source: 'a plain path:line citation, served while the file exists (the baseline every cited memory starts from)',
  judge({ rd, targets, anchors }) {
    return targets.map((B) =>
      anchors.map((an) =>
        rd.tree(B).has(an.path) ? { stale: false, to: { path: an.path, lines: an.lines } } : { stale: true, to: null },
      ),
    );
  },
};

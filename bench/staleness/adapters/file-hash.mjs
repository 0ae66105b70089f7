// A file hash: the memory stores the cited file's content hash (here its git blob id) and is stale
// as soon as the file differs or is gone, as file-level staleness tools do.
export default {
  name: 'file-hash',
  source: 'hash of the whole cited file; any change to the file makes its memories stale (file-level tools)',
  judge({ rd, base, targets, anchors }) {
    return targets.map((B) =>
      anchors.map((an) => {
        const now = rd.tree(B).get(an.path);
        return now && now === rd.tree(base).get(an.path)
          ? { stale: false, to: { path: an.path, lines: an.lines } }
          : { stale: true, to: null };
      }),
    );
  },
};

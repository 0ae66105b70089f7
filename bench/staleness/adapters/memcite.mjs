// Fuzzy relocation within the file, as memcite (MakiDevelop/agentic-memory, PyPI `memcite`)
// describes its FileRef: a content snapshot of the cited lines is kept; if the lines at the
// cited range no longer hash the same, the snapshot is searched for in the same file
// (`str.find`, first occurrence; snapshots under 20 non-blank characters are not searched) and
// the citation moves there; not found, or file gone: stale.
export default {
  name: 'memcite',
  source: 'memcite README ("content snapshot + fuzzy relocation when lines shift") and its FileRef validation (_find_snippet_in_file: first exact occurrence of the snapshot in the same file, ≥ 20 characters)',
  judge({ rd, targets, anchors }) {
    return targets.map((B) =>
      anchors.map((an) => {
        const lines = rd.file(B, an.path);
        if (!lines) return { stale: true, to: null };
        const [s, e] = an.lines;
        if (an.text.every((t, i) => lines[s - 1 + i] === t)) return { stale: false, to: { path: an.path, lines: an.lines } };
        const snapshot = `${an.text.join('\n')}\n`;
        if (snapshot.trim().length < 20) return { stale: true, to: null };
        const full = `${lines.join('\n')}\n`;
        const pos = full.indexOf(snapshot);
        if (pos < 0) return { stale: true, to: null };
        const start = full.slice(0, pos).split('\n').length;
        return { stale: false, to: { path: an.path, lines: [start, start + (e - s)] } };
      }),
    );
  },
};

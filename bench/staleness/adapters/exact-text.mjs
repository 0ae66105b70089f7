// Exact text at the cited path and lines: the memory is valid when those lines still read exactly
// as they did, else stale; no relocation. The mechanical form of the citation check GitHub
// Copilot Memory describes (citations = file paths + line numbers, verified against the current
// code before a memory is used).
export default {
  name: 'exact-text',
  source: 'GitHub Copilot Memory: citations (file path + line numbers) verified just in time against the current codebase (github.blog, "Building an agentic memory system for GitHub Copilot"; docs.github.com "Managing and curating Copilot Memory")',
  judge({ rd, targets, anchors }) {
    return targets.map((B) =>
      anchors.map((an) => {
        const lines = rd.file(B, an.path);
        const [s, e] = an.lines;
        const ok = lines && e <= lines.length && an.text.every((t, i) => lines[s - 1 + i] === t);
        return ok ? { stale: false, to: { path: an.path, lines: an.lines } } : { stale: true, to: null };
      }),
    );
  },
};

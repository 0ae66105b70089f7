/** History: the store's log and "what did we know at"; a memory's versions and the diff of any two. */
import { useEffect, useState } from 'preact/hooks';
import type { AtAnswer, LogEntry, MemoryHistory, VersionDiff } from '../../src/ui/wire';
import { get } from '../api';
import {
  Diff,
  ErrorBox,
  go,
  href,
  Loading,
  memoryHref,
  type Route,
  short,
  Time,
  useAction,
  useLoad,
} from '../ui';

export function HistoryPage({ route }: { route: Route }) {
  const log = useLoad((s) => get<LogEntry[]>('log', { limit: 200 }, s), []);
  const [rev, setRev] = useState(route.params.get('at') ?? '');
  const act = useAction();
  const look = async (e: Event) => {
    e.preventDefault();
    const r = await act.run(() => get<AtAnswer>('at', { rev }));
    if (r) go(href('memories', { at: r.commit }));
  };
  return (
    <section class="page history">
      <header class="page-head">
        <h1>History</h1>
      </header>
      <form class="at-form card" onSubmit={look}>
        <label for="at">What did we know at</label>
        <input
          id="at"
          name="at"
          value={rev}
          placeholder="a commit, tag, branch or date (2026-01-31, 2 weeks ago)"
          onInput={(e) => setRev((e.target as HTMLInputElement).value)}
        />
        <button type="submit" class="primary" disabled={!rev.trim() || act.busy}>
          Look
        </button>
        <ErrorBox error={act.error} />
      </form>
      <h2>Commits on the memory</h2>
      <ErrorBox error={log.error} />
      {log.data ? (
        log.data.length ? (
          <table class="list log">
            <tbody>
              {log.data.map((l) => (
                <tr key={l.commit}>
                  <td>
                    <code>{short(l.commit)}</code>
                  </td>
                  <td>
                    <Time iso={l.date} />
                  </td>
                  <td>{l.author}</td>
                  <td class="subject">{l.subject}</td>
                  <td>
                    <a href={href('memories', { at: l.commit })}>memory then</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p class="muted">No memory commits yet.</p>
        )
      ) : (
        <Loading />
      )}
    </section>
  );
}

export function MemoryHistoryPage({ id, route }: { id: string; route: Route }) {
  const store = route.params.get('store') ?? '';
  const h = useLoad((s) => get<MemoryHistory>(`memory/${id}/history`, { store }, s), [id, store]);
  const [pick, setPick] = useState<{ from?: string; to?: string }>({});
  const vs = h.data?.versions ?? [];
  useEffect(() => {
    if (vs.length) setPick({ to: vs[0].commit, from: (vs[1] ?? vs[0]).commit });
  }, [h.data]);
  const diff = useLoad(
    (s) =>
      pick.from && pick.to && pick.from !== pick.to
        ? get<VersionDiff>(`memory/${id}/diff`, { from: pick.from, to: pick.to, store }, s)
        : Promise.resolve(null),
    [id, pick.from, pick.to, store],
  );
  if (h.error) return <ErrorBox error={h.error} />;
  if (!h.data) return <Loading what="the history" />;
  const title = vs.find((v) => v.record)?.record?.title ?? id;
  return (
    <section class="page memory-history">
      <header class="page-head">
        <p class="crumbs">
          <a href="#/memories">Memories</a> / <a href={memoryHref(h.data.id, store)}>{short(h.data.id)}</a> /
          history
        </p>
        <h1>{title}</h1>
        <p class="muted">{vs.length} versions. Pick two to compare.</p>
      </header>
      <table class="list versions">
        <thead>
          <tr>
            <th title="older side">A</th>
            <th title="newer side">B</th>
            <th>Commit</th>
            <th>When</th>
            <th>Who</th>
            <th>What</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {vs.map((v) => (
            <tr key={v.commit} data-commit={v.commit}>
              <td>
                <input
                  type="radio"
                  name="from"
                  aria-label={`compare from ${short(v.commit)}`}
                  checked={pick.from === v.commit}
                  onChange={() => setPick((p) => ({ ...p, from: v.commit }))}
                />
              </td>
              <td>
                <input
                  type="radio"
                  name="to"
                  aria-label={`compare to ${short(v.commit)}`}
                  checked={pick.to === v.commit}
                  onChange={() => setPick((p) => ({ ...p, to: v.commit }))}
                />
              </td>
              <td>
                <code>{short(v.commit)}</code>
              </td>
              <td>
                <Time iso={v.date} />
              </td>
              <td title={v.email}>
                {v.author}
                {v.by?.kind === 'agent' ? <span class="muted"> · agent {v.by.agent ?? ''}</span> : null}
              </td>
              <td class="subject">
                {v.subject}
                {v.deleted ? <span class="badge status-archived">deleted</span> : null}
              </td>
              <td>{v.deleted ? null : <a href={memoryHref(h.data!.id, store, v.commit)}>this version</a>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorBox error={diff.error} />
      {diff.data ? (
        diff.data.rows.length ? (
          <Diff rows={diff.data.rows} label={`${short(pick.from ?? '')} → ${short(pick.to ?? '')}`} />
        ) : (
          <p class="muted">No difference.</p>
        )
      ) : pick.from === pick.to ? (
        <p class="muted">Pick two different versions.</p>
      ) : null}
    </section>
  );
}

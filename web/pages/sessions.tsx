/** Sessions: the summaries agent sessions left behind, newest first. */
import type { SessionRow } from '../../src/ui/wire';
import { get } from '../api';
import { Badge, Empty, ErrorBox, Loading, memoryHref, Time, useLoad } from '../ui';

export function SessionsPage() {
  const rows = useLoad((s) => get<SessionRow[]>('sessions', { limit: 200 }, s), []);
  return (
    <section class="page sessions">
      <header class="page-head">
        <h1>Sessions</h1>
        <p class="muted">
          What each agent session did: files changed, commands run, errors fixed, decisions, outcome.
        </p>
      </header>
      <ErrorBox error={rows.error} />
      {rows.data ? (
        rows.data.length ? (
          <table class="list">
            <thead>
              <tr>
                <th>When</th>
                <th>Agent</th>
                <th>Outcome</th>
                <th>Length</th>
                <th>Summary</th>
              </tr>
            </thead>
            <tbody>
              {rows.data.map((r) => (
                <tr key={r.id} data-id={r.id}>
                  <td>
                    <Time iso={r.created} />
                  </td>
                  <td>{String(r.agent ?? '—')}</td>
                  <td>{r.outcome ? <Badge kind="outcome" value={String(r.outcome)} /> : '—'}</td>
                  <td>
                    {r.duration_s === null
                      ? '—'
                      : `${Math.max(1, Math.round(Number(r.duration_s) / 60))} min`}
                  </td>
                  <td class="title">
                    <a href={memoryHref(r.id)}>{r.title}</a>
                    {r.compressed ? <span class="muted"> (compressed)</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty>
            No session summaries yet. Install the agent hooks with <code>git mem hooks install --claude</code>
            .
          </Empty>
        )
      ) : (
        <Loading />
      )}
    </section>
  );
}

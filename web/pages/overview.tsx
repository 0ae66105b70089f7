/** Overview: counts and charts: by type and status, over time, the stale share, folders with and without memory. */
import type { Overview } from '../../src/ui/wire';
import { get } from '../api';
import { useInfo } from '../info';
import { Bars, Empty, ErrorBox, href, Loading, STATUS_COLORS, StackedBars, useLoad } from '../ui';

/** A point's label: its day, or its time when every point is on one day. */
function when(iso: string, all: Array<{ date: string }>): string {
  const oneDay = all.every((p) => p.date.slice(0, 10) === iso.slice(0, 10));
  return oneDay ? iso.slice(11, 16) : iso.slice(0, 10);
}

function Stat({ n, label, to, attn }: { n: number | string; label: string; to?: string; attn?: boolean }) {
  const body = (
    <>
      <span class="n">{n}</span>
      <span class="l">{label}</span>
    </>
  );
  return <li class={`stat ${attn ? 'attn' : ''}`}>{to ? <a href={to}>{body}</a> : body}</li>;
}

export function OverviewPage() {
  const info = useInfo();
  const o = useLoad((s) => get<Overview>('overview', {}, s), [info.data?.tip]);
  if (o.error) return <ErrorBox error={o.error} />;
  if (!o.data) return <Loading what="the overview" />;
  const d = o.data;
  const c = info.data?.counts;
  const types = info.data?.types ?? Object.keys(d.stats.byType);
  const statuses = info.data?.statuses ?? Object.keys(d.stats.byStatus);
  if (!d.stats.records)
    return (
      <section class="page overview">
        <h1>Overview</h1>
        <Empty>
          No memories yet. Add one with <code>git mem add --title "…" --content "…"</code>, or let an agent
          propose them.
        </Empty>
      </section>
    );
  const bare = d.folders.filter((f) => !f.memories);
  return (
    <section class="page overview">
      <header class="page-head">
        <h1>Overview</h1>
      </header>
      <ul class="stats">
        <Stat n={d.stats.records} label="memories" to="#/memories" />
        <Stat
          n={c?.pending ?? d.stats.byStatus.pending ?? 0}
          label="waiting for review"
          to="#/review"
          attn={!!c?.pending}
        />
        <Stat
          n={d.stale.stale}
          label="stale"
          to={href('memories', { status: 'stale' })}
          attn={!!d.stale.stale}
        />
        <Stat n={c?.conflicts ?? 0} label="conflicts" to="#/conflicts" attn={!!c?.conflicts} />
        <Stat n={d.stats.anchored} label="anchored to code" />
        <Stat n={`~${d.stats.tokens}`} label="tokens" />
        <Stat n={d.stats.commits} label="commits" to="#/history" />
      </ul>
      <div class="grid">
        <section class="card">
          <h2>By type</h2>
          <Bars data={types.filter((t) => d.stats.byType[t]).map((t) => [t, d.stats.byType[t]])} />
        </section>
        <section class="card">
          <h2>By status</h2>
          <Bars
            data={statuses.filter((t) => d.stats.byStatus[t]).map((t) => [t, d.stats.byStatus[t]])}
            colors={(k) => STATUS_COLORS[k] ?? '#888'}
          />
          <p class="muted">
            Stale share: <strong>{Math.round(d.stale.share * 100)}%</strong> of {d.stale.anchored} anchored
            memories in force.
          </p>
        </section>
        <section class="card wide">
          <h2>Created per month, by type</h2>
          <StackedBars data={d.byMonth.map((m) => ({ label: m.month, parts: m.byType }))} keys={types} />
        </section>
        {d.overTime.length > 1 ? (
          <section class="card wide">
            <h2>Status over time</h2>
            <StackedBars
              data={d.overTime.map((p) => ({ label: when(p.date, d.overTime), parts: p.byStatus }))}
              keys={statuses}
            />
          </section>
        ) : null}
        <section class="card wide">
          <h2>Which folders have memory</h2>
          {d.code.head ? (
            <>
              <p class="muted">
                {d.code.covered} of {d.code.files} files at HEAD have a memory anchored or scoped to them.
              </p>
              <table class="list folders">
                <thead>
                  <tr>
                    <th>Folder</th>
                    <th>Files</th>
                    <th>With memory</th>
                    <th>Memories</th>
                  </tr>
                </thead>
                <tbody>
                  {d.folders.map((f) => (
                    <tr key={f.path} class={f.memories ? '' : 'none'}>
                      <td>
                        <a href={href('code', { path: '' })}>{f.path}/</a>
                      </td>
                      <td>{f.files}</td>
                      <td>
                        <meter min={0} max={f.files} value={f.covered} title={`${f.covered} of ${f.files}`} />{' '}
                        {f.covered}
                      </td>
                      <td>{f.memories || <span class="muted">none</span>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {bare.length ? (
                <p class="muted">No memory at all: {bare.map((f) => `${f.path}/`).join(', ')}</p>
              ) : null}
            </>
          ) : (
            <p class="muted">The repository has no commit yet.</p>
          )}
        </section>
      </div>
    </section>
  );
}

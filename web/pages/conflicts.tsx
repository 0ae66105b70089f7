/** Conflicts: what a merge could not settle, both versions side by side; keep one, the other, or an edit. */
import { useState } from 'preact/hooks';
import type { Conflict, ConflictAuthor, ResolveAnswer } from '../../src/ui/wire';
import { post } from '../api';
import { useInfo } from '../info';
import { ErrorBox, memoryHref, SideBySide, short, Time, useAction } from '../ui';
import { QueuePage } from './queue';

/** A field's value as text: a list comma-separated, a map (links, a verification) as its non-empty entries. */
function show(v: unknown): string {
  if (Array.isArray(v)) return v.map(show).join(', ') || '—';
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'object') {
    const parts = Object.entries(v)
      .filter(([, x]) => show(x) !== '—')
      .map(([k, x]) => `${k}: ${show(x)}`);
    return parts.join('; ') || '—';
  }
  return String(v);
}

/** Who wrote a side, and in which commit. */
function Author({
  a,
  side,
  from,
}: {
  a: ConflictAuthor | null;
  side: 'ours' | 'other';
  from?: string | null;
}) {
  if (!a)
    return from ? (
      <span class="muted by" data-side={side}>
        {' '}
        from {/^[0-9a-f]{40,64}$/.test(from) ? short(from) : from}
      </span>
    ) : null;
  return (
    <span class="by" data-side={side}>
      <span class="muted"> by </span>
      <span class="author" title={a.email}>
        {a.name || a.email}
      </span>
      <span class="muted">
        {' '}
        in <code>{short(a.commit)}</code>, <Time iso={a.date} />
      </span>
    </span>
  );
}

function ConflictCard({ c, onDone }: { c: Conflict; onDone: (what: string) => void }) {
  // the fields compared: the field table's (GET /api/info), as the server compares them
  const compared = useInfo().data?.compared ?? [];
  const ours = c.ours as unknown as Record<string, unknown>;
  const [editing, setEditing] = useState(false);
  const [content, setContent] = useState(c.ours.body);
  const act = useAction();
  const resolve = async (body: { take?: string; content?: string }, what: string) => {
    const r = await act.run(() => post<ResolveAnswer>(`conflicts/${c.id}/resolve`, body));
    if (r) onDone(what);
  };
  return (
    <li class="card conflict" data-id={c.id}>
      <header>
        <h2>
          <a href={memoryHref(c.id)}>{c.title}</a> <code class="muted">{short(c.id)}</code>
        </h2>
        <p class="muted">
          The merge could not settle: {c.reasons.join(', ')}
          {c.lostAlias ? `; it lost the alias “${c.lostAlias}” to an older memory` : ''}.
        </p>
      </header>
      {c.deletion ? (
        <p class="banner warn">
          The other side deleted it{c.deletion.by ? ` (${String(c.deletion.by)})` : ''}
          {c.deletion.reason ? `: ${String(c.deletion.reason)}` : ''}, while this side changed it.
        </p>
      ) : null}
      {c.others.map((o) => (
        <div class="other" key={o.hash}>
          <table class="fields-cmp">
            <thead>
              <tr>
                <th />
                <th>
                  This version (kept)
                  <Author a={c.oursAuthor} side="ours" />
                </th>
                <th>
                  Other version <code>{o.hash}</code>
                  <Author a={o.author} side="other" from={o.from} />
                </th>
              </tr>
            </thead>
            <tbody>
              {compared.map((k) => {
                const differs = o.fields.includes(k);
                return (
                  <tr key={k} class={differs ? 'differs' : ''}>
                    <th>{k}</th>
                    <td>{show(ours[k])}</td>
                    <td>{o.record ? show((o.record as unknown as Record<string, unknown>)[k]) : '—'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {o.record ? (
            <SideBySide
              rows={o.body}
              left={`This version’s text${c.oursAuthor ? ` (${c.oursAuthor.name || c.oursAuthor.email})` : ''}`}
              right={`The other version’s text${o.author ? ` (${o.author.name || o.author.email})` : ''}`}
            />
          ) : (
            <p class="muted">The other version cannot be read.</p>
          )}
        </div>
      ))}
      {editing ? (
        <div class="editor">
          <label>
            The settled text (Markdown)
            <textarea
              name="content"
              rows={Math.min(24, Math.max(6, content.split('\n').length + 2))}
              value={content}
              onInput={(e) => setContent((e.target as HTMLTextAreaElement).value)}
            />
          </label>
        </div>
      ) : null}
      <ErrorBox error={act.error} />
      <div class="actions">
        {editing ? (
          <>
            <button
              type="button"
              class="primary"
              disabled={act.busy || !content.trim()}
              onClick={() => resolve({ content }, `Settled “${c.title}” with the edited text.`)}
              data-action="save-edit"
            >
              Save the edit
            </button>
            <button type="button" onClick={() => setEditing(false)} disabled={act.busy}>
              Cancel
            </button>
          </>
        ) : (
          <>
            <button
              type="button"
              onClick={() => resolve({ take: 'ours' }, `Kept this version of “${c.title}”.`)}
              disabled={act.busy}
              data-action="keep"
            >
              Keep this version
            </button>
            {c.others.map((o) => (
              <button
                type="button"
                key={o.hash}
                onClick={() => resolve({ take: o.hash }, `Took the other version of “${c.title}”.`)}
                disabled={act.busy}
                data-action="take-other"
              >
                Take the other version{c.others.length > 1 ? ` ${o.hash.slice(0, 8)}` : ''}
              </button>
            ))}
            {c.deletion && !c.others.length ? (
              <button
                type="button"
                class="danger"
                onClick={() => resolve({ take: 'theirs' }, `Deleted “${c.title}”.`)}
                disabled={act.busy}
                data-action="take-deletion"
              >
                Apply the deletion
              </button>
            ) : null}
            <button type="button" onClick={() => setEditing(true)} disabled={act.busy} data-action="edit">
              Edit…
            </button>
          </>
        )}
      </div>
    </li>
  );
}

export function ConflictsPage() {
  return (
    <QueuePage<Conflict>
      name="conflicts"
      title="Conflicts"
      intro="Memories two clones changed in ways a merge could not settle. Both versions are kept until someone picks."
      empty="Nothing to settle: no memory is flagged by a merge."
      card={(c, onDone) => <ConflictCard key={c.id} c={c} onDone={onDone} />}
    />
  );
}

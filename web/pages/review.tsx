/** Review: proposals agents left pending. Approve, edit then approve, or reject. */
import { useState } from 'preact/hooks';
import type { ApproveAnswer, Proposal, RejectAnswer } from '../../src/ui/wire';
import { post } from '../api';
import { Badge, ErrorBox, Markdown, memoryHref, short, Time, useAction } from '../ui';
import { QueuePage } from './queue';

function ProposalCard({ p, onDone }: { p: Proposal; onDone: (what: string) => void }) {
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(p.title);
  const [body, setBody] = useState(p.body);
  const act = useAction();
  const approve = async (edit: boolean) => {
    const payload = edit
      ? { ...(title !== p.title ? { title } : {}), ...(body !== p.body ? { body } : {}) }
      : {};
    const r = await act.run(() => post<ApproveAnswer>(`review/${p.id}/approve`, payload));
    if (r) onDone(`Approved “${edit ? title : p.title}”.`);
  };
  const reject = async () => {
    const r = await act.run(() => post<RejectAnswer>(`review/${p.id}/reject`));
    if (r) onDone(`Rejected “${p.title}”.`);
  };
  return (
    <li class="card proposal" data-id={p.id}>
      <header>
        <h2>
          <a href={memoryHref(p.id)}>{p.title}</a>
        </h2>
        <p class="badges">
          <Badge kind="type" value={p.type} />
          <span class="muted">
            confidence {p.confidence}
            {p.method || p.source ? ` · from ${p.method ?? p.source}` : ''}
            {p.session ? ` (session ${short(String(p.session))})` : ''} · <Time iso={p.created} />
          </span>
        </p>
      </header>
      {editing ? (
        <div class="editor">
          <label>
            Title{' '}
            <input
              name="title"
              value={title}
              onInput={(e) => setTitle((e.target as HTMLInputElement).value)}
            />
          </label>
          <label>
            Text (Markdown)
            <textarea
              name="body"
              rows={Math.min(20, Math.max(6, body.split('\n').length + 2))}
              value={body}
              onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)}
            />
          </label>
        </div>
      ) : (
        <Markdown text={p.body} />
      )}
      {p.tags.length ? (
        <p class="tags">
          {p.tags.map((t) => (
            <span key={t} class="tag">
              {t}
            </span>
          ))}
        </p>
      ) : null}
      <ErrorBox error={act.error} />
      <div class="actions">
        {editing ? (
          <>
            <button
              type="button"
              class="primary"
              disabled={act.busy || !title.trim() || !body.trim()}
              onClick={() => approve(true)}
              data-action="approve-edited"
            >
              Approve edited
            </button>
            <button type="button" disabled={act.busy} onClick={() => setEditing(false)}>
              Cancel edit
            </button>
          </>
        ) : (
          <>
            <button
              type="button"
              class="primary"
              disabled={act.busy}
              onClick={() => approve(false)}
              data-action="approve"
            >
              Approve
            </button>
            <button type="button" disabled={act.busy} onClick={() => setEditing(true)} data-action="edit">
              Edit, then approve
            </button>
          </>
        )}
        <button type="button" class="danger" disabled={act.busy} onClick={reject} data-action="reject">
          Reject
        </button>
      </div>
    </li>
  );
}

export function ReviewPage() {
  return (
    <QueuePage<Proposal>
      name="review"
      title="Review"
      intro="Memories proposed by agents wait here until a person approves them. Rejected ones are not proposed again."
      empty="No proposals waiting."
      card={(p, onDone) => <ProposalCard key={p.id} p={p} onDone={onDone} />}
    />
  );
}

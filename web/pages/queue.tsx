/**
 * A page of cards waiting for a person (the review queue, the merge conflicts): the list, what was
 * just done, and the list and the counts in the navigation loaded again after each decision.
 */
import type { ComponentChildren, JSX } from 'preact';
import { useState } from 'preact/hooks';
import { get } from '../api';
import { useInfo } from '../info';
import { Empty, ErrorBox, Loading, useLoad } from '../ui';

export function QueuePage<T extends { id: string }>(props: {
  /** the page's class and its API path */
  name: 'review' | 'conflicts';
  title: string;
  intro: ComponentChildren;
  empty: ComponentChildren;
  card: (item: T, onDone: (what: string) => void) => JSX.Element;
}) {
  const info = useInfo();
  const list = useLoad((s) => get<T[]>(props.name, {}, s), []);
  const [note, setNote] = useState<string | null>(null);
  const onDone = (what: string) => {
    setNote(what);
    list.reload();
    info.reload();
  };
  return (
    <section class={`page ${props.name}`}>
      <header class="page-head">
        <h1>{props.title}</h1>
        <p class="muted">{props.intro}</p>
        {note ? (
          <p class="banner ok" role="status">
            {note}
          </p>
        ) : null}
      </header>
      <ErrorBox error={list.error} />
      {list.data ? (
        list.data.length ? (
          <ul class="cards">{list.data.map((item) => props.card(item, onDone))}</ul>
        ) : (
          <Empty>{props.empty}</Empty>
        )
      ) : (
        <Loading />
      )}
    </section>
  );
}

/** What the server says about the store (GET /api/info and the conflict count), for every page. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Info } from '../src/ui/wire';
import type { Loaded } from './ui';

/** GET /api/info's answer, with the count of conflicts (GET /api/conflicts/count, asked apart). */
export interface PageInfo extends Omit<Info, 'counts'> {
  counts: Info['counts'] & { conflicts: number };
}

export const InfoContext = createContext<Loaded<PageInfo> | null>(null);

/** What the server says about the store, and a way to ask again after a change. */
export function useInfo(): Loaded<PageInfo> {
  return useContext(InfoContext)!;
}

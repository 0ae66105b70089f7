/** What the server says about the store (GET /api/info and the conflict count), for every page. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Loaded } from './ui';

export interface Info {
  repo: string;
  root: string;
  ref: string;
  tip: string | null;
  workTree: boolean;
  global: boolean;
  counts: { memories: number; pending: number; conflicts: number; stale: number };
  types: string[];
  statuses: string[];
  sorts: string[];
}

export const InfoContext = createContext<Loaded<Info> | null>(null);

/** What the server says about the store, and a way to ask again after a change. */
export function useInfo(): Loaded<Info> {
  return useContext(InfoContext)!;
}

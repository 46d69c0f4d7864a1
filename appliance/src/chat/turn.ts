import type { ChatMetadata, Source, StoredTurn } from '../api/types';

/** One question and its answer as the thread shows it. */
export interface TurnState {
  key: string;
  query: string;
  answer: string;
  sources: Source[];
  mode: 'generative' | 'extractive' | null;
  /** Timing and token budget: known for answers of this visit, not for turns read back from history. */
  metadata: ChatMetadata | null;
  status: 'done' | 'stopped' | 'failed';
  error?: string;
}

/** The service's fixed answer when retrieval found nothing relevant (README, Chat). */
export const NOT_FOUND_ANSWER = 'I could not find this in the documents.';

let counter = 0;
export const turnKey = () => `t${Date.now().toString(36)}${(counter++).toString(36)}`;

export const fromStored = (turn: StoredTurn): TurnState => ({
  key: turnKey(),
  query: turn.query,
  answer: turn.answer,
  sources: turn.sources,
  mode: turn.mode,
  metadata: null,
  status: 'done',
});

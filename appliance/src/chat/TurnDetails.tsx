import type { ChatMetadata } from '../api/types';
import { formatMs } from '../components/format';

/** Timing, token budget and retrieval settings of one answer, folded away until asked for. */
export function TurnDetails({ metadata }: { metadata: ChatMetadata }) {
  const budget = metadata.token_budget;
  const settings = metadata.retrieval_settings;
  return (
    <details class="turn-details">
      <summary>Timing and token budget</summary>
      <dl class="facts">
        <dt>Classify</dt>
        <dd>{formatMs(metadata.timing.classify)}</dd>
        <dt>Retrieve</dt>
        <dd>{formatMs(metadata.timing.retrieve)}</dd>
        <dt>Generate</dt>
        <dd>{formatMs(metadata.timing.generate)}</dd>
        {budget ? (
          <>
            <dt>Context window</dt>
            <dd>{budget.limit} tokens</dd>
            <dt>Prompt</dt>
            <dd>{budget.estimated_prompt} tokens</dd>
            <dt>Kept for the answer</dt>
            <dd>{budget.reserved_completion} tokens</dd>
            <dt>Trimmed to fit</dt>
            <dd>
              {budget.chunks_dropped} passages, {budget.turns_dropped} earlier turns
            </dd>
          </>
        ) : (
          <>
            <dt>Token budget</dt>
            <dd>nothing had to be trimmed</dd>
          </>
        )}
        {typeof settings.mode_used === 'string' && (
          <>
            <dt>Search</dt>
            <dd>{settings.mode_used}</dd>
          </>
        )}
      </dl>
    </details>
  );
}

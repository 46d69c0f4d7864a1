import type { ConversationSummary } from '../api/types';
import { formatDate } from '../components/format';
import { Link } from '../router/router';

interface Props {
  conversations: ConversationSummary[] | null;
  current: string | undefined;
  onNewChat: () => void;
}

/** The caller's conversations, most recent first: a title (their first question, shown as text) to resume. */
export function ConversationList({ conversations, current, onNewChat }: Props) {
  return (
    <div class="conversations">
      <button type="button" class="button-primary button-block" onClick={onNewChat}>
        New chat
      </button>
      <h2 class="conversations-heading">Conversations</h2>
      {conversations === null && <p class="loading">Loading…</p>}
      {conversations?.length === 0 && <p class="muted">No conversations yet.</p>}
      <ul>
        {conversations?.map((conversation) => (
          <li key={conversation.id}>
            <Link href={`/chat/${encodeURIComponent(conversation.id)}`} aria-current={conversation.id === current ? 'page' : undefined}>
              <span class="conversation-title">{conversation.title || 'Untitled'}</span>
              <span class="muted conversation-date">{formatDate(conversation.updated_at)}</span>
            </Link>
          </li>
        ))}
      </ul>
    </div>
  );
}

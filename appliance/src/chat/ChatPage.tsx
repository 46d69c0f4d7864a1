import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { isAbort, messageOf } from '../api/errors';
import type { ConversationSummary, Source } from '../api/types';
import { Alert } from '../components/Alert';
import { navigate } from '../router/router';
import type { PageProps } from '../routes';
import { SourceViewer } from '../sources/SourceViewer';
import { createStore, type Store } from '../store';
import { getConversation, listConversations, streamChat } from './api';
import { Composer } from './Composer';
import { ConversationList } from './ConversationList';
import { StreamingTurn } from './StreamingTurn';
import { Turn } from './Turn';
import { fromStored, turnKey, type TurnState } from './turn';
import './chat.css';

interface Pending {
  query: string;
  stream: Store<string>;
}

export default function ChatPage({ params }: PageProps) {
  const conversationId = params.conversationId;
  const [turns, setTurns] = useState<TurnState[]>([]);
  const [pending, setPending] = useState<Pending | null>(null);
  const [loading, setLoading] = useState(false);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [conversations, setConversations] = useState<ConversationSummary[] | null>(null);
  const [listOpen, setListOpen] = useState(false);
  const [viewing, setViewing] = useState<Source | null>(null);
  const [announcement, setAnnouncement] = useState('');
  /** The conversation the thread shows; set before the URL catches up with a conversation just started. */
  const shown = useRef<string | undefined>(undefined);
  const running = useRef<AbortController | null>(null);

  const refreshList = () => listConversations().then((list) => setConversations(list.conversations), () => setConversations([]));
  useEffect(() => void refreshList(), []);

  useEffect(() => {
    setListOpen(false);
    if (conversationId === shown.current) return;
    running.current?.abort();
    shown.current = conversationId;
    setTurns([]);
    setLoadError(null);
    if (!conversationId) return;
    setLoading(true);
    getConversation(conversationId)
      .then((conversation) => shown.current === conversationId && setTurns(conversation.turns.map(fromStored)))
      .catch((error) => shown.current === conversationId && setLoadError(messageOf(error)))
      .finally(() => setLoading(false));
  }, [conversationId]);

  const ask = async (query: string) => {
    const stream = createStore('');
    const controller = new AbortController();
    running.current = controller;
    setPending({ query, stream });
    setAnnouncement('Writing the answer…');
    const key = turnKey();
    try {
      const metadata = await streamChat(
        { query, ...(shown.current ? { conversation_id: shown.current } : {}) },
        { onDelta: (text) => stream.set(stream.get() + text) },
        controller.signal,
      );
      setTurns((all) => [...all, { key, query, answer: stream.get(), sources: metadata.sources, mode: metadata.mode, metadata, status: 'done' }]);
      setAnnouncement('The answer is complete.');
      if (!shown.current) {
        shown.current = metadata.conversation_id;
        navigate(`/chat/${encodeURIComponent(metadata.conversation_id)}`, { replace: true });
      }
      void refreshList();
    } catch (error) {
      const stopped = isAbort(error);
      setTurns((all) => [...all, { key, query, answer: stream.get(), sources: [], mode: null, metadata: null, status: stopped ? 'stopped' : 'failed', error: messageOf(error) }]);
      setAnnouncement(stopped ? 'Stopped.' : 'The answer failed.');
    } finally {
      if (running.current === controller) running.current = null;
      setPending(null);
    }
  };

  const newChat = () => {
    running.current?.abort();
    navigate('/chat');
  };
  const openSource = useCallback((source: Source) => setViewing(source), []);

  return (
    <div class="chat">
      <aside class={listOpen ? 'chat-sidebar open' : 'chat-sidebar'} aria-label="Conversations">
        <ConversationList conversations={conversations} current={conversationId} onNewChat={newChat} />
      </aside>
      <section class="chat-main" aria-labelledby="chat-title">
        <div class="chat-header">
          <h1 id="chat-title" tabIndex={-1}>
            Chat
          </h1>
          <button type="button" class="button-secondary button-small conversations-toggle" aria-expanded={listOpen} onClick={() => setListOpen(!listOpen)}>
            Conversations
          </button>
        </div>
        {loadError && <Alert kind="error">{loadError}</Alert>}
        {loading && <p class="loading">Loading the conversation…</p>}
        {!loading && !loadError && turns.length === 0 && !pending && (
          <p class="muted chat-empty">Ask about the documents in the library. Answers cite their sources as numbers you can open.</p>
        )}
        <div class="thread">
          {turns.map((turn) => (
            <Turn key={turn.key} turn={turn} onOpenSource={openSource} />
          ))}
          {pending && <StreamingTurn query={pending.query} stream={pending.stream} />}
        </div>
        <p class="visually-hidden" aria-live="polite">
          {announcement}
        </p>
        <Composer busy={pending !== null} onAsk={(query) => void ask(query)} onStop={() => running.current?.abort()} />
      </section>
      {viewing && <SourceViewer source={viewing} onClose={() => setViewing(null)} />}
    </div>
  );
}

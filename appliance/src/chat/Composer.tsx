import { useState } from 'preact/hooks';

const QUERY_MAX_LENGTH = 4000;

interface Props {
  busy: boolean;
  onAsk: (query: string) => void;
  onStop: () => void;
}

/** The question box: Enter sends, Shift+Enter starts a new line; while an answer streams, Stop aborts it. */
export function Composer({ busy, onAsk, onStop }: Props) {
  const [text, setText] = useState('');
  const send = () => {
    const query = text.trim();
    if (!query || busy) return;
    onAsk(query);
    setText('');
  };
  return (
    <form
      class="composer"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <label for="question" class="visually-hidden">
        Ask a question about the documents
      </label>
      <textarea
        id="question"
        rows={2}
        maxLength={QUERY_MAX_LENGTH}
        placeholder="Ask a question about the documents"
        value={text}
        onInput={(event) => setText(event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
            event.preventDefault();
            send();
          }
        }}
      />
      {busy ? (
        <button type="button" class="button-danger" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" class="button-primary" disabled={!text.trim()}>
          Send
        </button>
      )}
    </form>
  );
}

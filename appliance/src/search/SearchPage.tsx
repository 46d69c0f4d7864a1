import { useRef, useState } from 'preact/hooks';
import { isAbort, messageOf } from '../api/errors';
import type { SearchResult } from '../api/types';
import { Alert } from '../components/Alert';
import { TextField } from '../components/Field';
import { Highlighted } from '../sources/Highlighted';
import { locateChunk } from '../sources/locate';
import { SourceViewer } from '../sources/SourceViewer';
import { search, type SearchMode, type SearchResponse } from './api';
import './search.css';

const MODES: { value: SearchMode; label: string }[] = [
  { value: 'hybrid', label: 'Hybrid (meaning and keywords)' },
  { value: 'keyword', label: 'Keywords' },
  { value: 'vector', label: 'Meaning (vectors)' },
];

/** The first query word found in the text, marked (a result is a chunk: the reader sees why it matched). */
function firstMatch(text: string, query: string) {
  for (const word of query.split(/\s+/).filter((w) => w.length > 2)) {
    const span = locateChunk(text.toLowerCase(), word.toLowerCase());
    if (span) return span;
  }
  return null;
}

export default function SearchPage() {
  const [query, setQuery] = useState('');
  const [mode, setMode] = useState<SearchMode>('hybrid');
  const [response, setResponse] = useState<SearchResponse | null>(null);
  const [searched, setSearched] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [viewing, setViewing] = useState<SearchResult | null>(null);
  const running = useRef<AbortController | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    const text = query.trim();
    if (!text) return;
    running.current?.abort();
    const controller = new AbortController();
    running.current = controller;
    setBusy(true);
    setError(null);
    try {
      setResponse(await search(text, mode, controller.signal));
      setSearched(text);
    } catch (caught) {
      if (!isAbort(caught)) setError(messageOf(caught));
    } finally {
      if (running.current === controller) setBusy(false);
    }
  };

  const settings = response?.retrieval_settings;
  return (
    <section class="page stack">
      <h1 tabIndex={-1}>Search</h1>
      <form class="search-form" onSubmit={submit} role="search">
        <TextField label="Search the documents" type="search" value={query} onValue={setQuery} required maxLength={2000} />
        <div class="field">
          <label for="search-mode">Mode</label>
          <select id="search-mode" value={mode} onChange={(event) => setMode(event.currentTarget.value as SearchMode)}>
            {MODES.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </div>
        <button type="submit" class="button-primary" disabled={busy}>
          {busy ? 'Searching…' : 'Search'}
        </button>
      </form>
      {error && <Alert kind="error">{error}</Alert>}
      {settings && settings.mode_used !== settings.mode && (
        <Alert kind="info">
          Searched by {settings.mode_used} instead of {settings.mode}
          {settings.reason ? `: ${settings.reason}` : ''}.
        </Alert>
      )}
      {response && (
        <p class="muted" aria-live="polite">
          {response.results.length === 0 ? 'No passages match.' : `${response.results.length} passages`}
        </p>
      )}
      <ol class="results">
        {response?.results.map((result) => (
          <li key={result.chunk_id} class="result">
            <div class="source-head">
              <span class="source-file">{result.filename}</span>
              {result.page !== undefined && <span class="muted">page {result.page}</span>}
              {result.heading && <span class="muted source-heading">{result.heading}</span>}
              <span class="muted">score {result.score.toFixed(3)}</span>
              <button type="button" class="button-secondary button-small" onClick={() => setViewing(result)} aria-label={`Open ${result.filename} at this passage`}>
                Open
              </button>
            </div>
            <p class="source-text">
              <Highlighted text={result.text} span={firstMatch(result.text, searched)} />
            </p>
          </li>
        ))}
      </ol>
      {viewing && <SourceViewer source={viewing} onClose={() => setViewing(null)} />}
    </section>
  );
}

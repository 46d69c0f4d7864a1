import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import { Alert } from '../components/Alert';
import { useLoad } from '../components/useLoad';
import { formatBytes, formatDate } from '../components/format';
import { isFinished } from '../jobs/api';
import { JobProgress } from '../jobs/JobProgress';
import { useLatestJobs } from '../jobs/useLatestJobs';
import { roleAtLeast, session } from '../session/session';
import { useStore } from '../store';
import { type AdaptationState, indexStats, type IndexStats, REBUILD_JOB_TYPE, rebuildIndex, theIndex } from './api';

/** The figures are read again this often while they change (an adaptation, chunks waiting for vectors)… */
const FOLLOW_MS = 3000;
/** …and this often otherwise (documents arrive from other people, connectors and schedules). */
const IDLE_MS = 15_000;

const ADAPTATION: Record<AdaptationState, { label: string; badge: string }> = {
  off: { label: 'Off', badge: '' },
  waiting: { label: 'Not yet', badge: '' },
  adapting: { label: 'Adapting', badge: 'badge-job-running' },
  in_force: { label: 'In force', badge: 'badge-ok' },
  failed: { label: 'Failed', badge: 'badge-error' },
};

/** Something is changing that the figures will show: the adaptation runs, or chunks wait for a vector of the model in force. */
const changing = (stats: IndexStats) => stats.corpus_adaptation.state === 'adapting' || (stats.model_id !== null && stats.stale_chunks > 0);

/** The search index's figures, and (editors) a rebuild of the vectors from the stored chunks. */
export default function IndexPage() {
  const { user } = useStore(session);
  const canRebuild = roleAtLeast(user?.role, 'editor');
  const loaded = useLoad(indexStats);
  const stats = loaded.value;
  const [failure, setError] = useState<string | null>(null);
  const error = failure ?? loaded.error;
  // A finished rebuild changed the figures.
  const { jobs, track } = useLatestJobs(REBUILD_JOB_TYPE, theIndex, loaded.reload);
  const job = jobs.get('index');
  const rebuilding = !!job && !isFinished(job);
  useEffect(() => {
    if (!stats) return;
    const timer = setTimeout(loaded.reload, changing(stats) ? FOLLOW_MS : IDLE_MS);
    return () => clearTimeout(timer);
  }, [stats]);
  const adaptation = stats && ADAPTATION[stats.corpus_adaptation.state];

  const rebuild = async () => {
    setError(null);
    try {
      track(await rebuildIndex());
    } catch (caught) {
      setError(messageOf(caught));
    }
  };

  return (
    <section class="page stack">
      <div class="page-head">
        <h1 tabIndex={-1}>Search index</h1>
        {canRebuild && (
          <button type="button" class="button-primary" disabled={rebuilding} onClick={() => void rebuild()}>
            {rebuilding ? 'Rebuilding…' : 'Rebuild the index'}
          </button>
        )}
      </div>
      {canRebuild && <p class="muted">A rebuild embeds every stored chunk again into a new index that replaces the old one when complete; search keeps answering from the old one meanwhile.</p>}
      {error && <Alert kind="error">{error}</Alert>}
      {job && (
        <section class="panel stack" aria-labelledby="rebuild-title">
          <h2 id="rebuild-title">{rebuilding ? 'Rebuild in progress' : 'Last rebuild'}</h2>
          <JobProgress job={job} label="Index rebuild" />
        </section>
      )}
      {stats === null && !error && <p class="loading">Loading…</p>}
      {stats && (
        <dl class="facts">
          <dt>Chunks</dt>
          <dd>{stats.chunks.toLocaleString()}</dd>
          <dt>Vectors</dt>
          <dd>{stats.vectors.toLocaleString()}</dd>
          <dt>Chunks without a vector</dt>
          <dd>
            {stats.stale_chunks.toLocaleString()}
            {stats.stale_chunks > 0 && <span class="muted"> (found by keywords only until they are embedded)</span>}
          </dd>
          <dt>Embedding model</dt>
          <dd>{stats.model_id ? `${stats.model_id}${stats.dimension ? `, ${stats.dimension} dimensions` : ''}` : 'None installed: keyword search only'}</dd>
          <dt>Adapted to this collection</dt>
          <dd>
            <span class={`badge ${adaptation!.badge}`}>{adaptation!.label}</span> <span class="muted">{stats.corpus_adaptation.detail}</span>
          </dd>
          <dt>Device</dt>
          <dd>{stats.device ?? '—'}</dd>
          <dt>Database size</dt>
          <dd>{formatBytes(stats.database_bytes)}</dd>
          <dt>Vector index size</dt>
          <dd>{formatBytes(stats.vectors_bytes)}</dd>
          <dt>Last rebuild</dt>
          <dd>{stats.last_rebuild_at ? formatDate(stats.last_rebuild_at) : 'Never'}</dd>
        </dl>
      )}
    </section>
  );
}

import { useState } from 'preact/hooks';
import { Alert } from '../components/Alert';
import { SelectField } from '../components/Field';
import { useLoad } from '../components/useLoad';
import { listSources } from '../metadata/api';
import { chunkSizes, chunksPerDocument, coverage, type Distribution, emptyMetadata, hitRate, inheritance } from './api';
import './analytics.css';

const percent = (ratio: number) => `${Math.round(ratio * 1000) / 10}%`;

/** Chunking and metadata statistics of one source, as CSS bar charts. */
export default function AnalyticsPage() {
  const sources = useLoad(listSources);
  const [source, setSource] = useState('uploads');
  const loaded = useLoad(async () => {
    const [sizes, perDocument, fields, hits, inherited, empty] = await Promise.all([
      chunkSizes(source), chunksPerDocument(source), coverage(source), hitRate(source), inheritance(source), emptyMetadata(source),
    ]);
    return { sizes, perDocument, fields, hits, inherited, empty };
  }, [source]);
  const data = loaded.value;

  return (
    <section class="page stack">
      <div class="page-head">
        <h1 tabIndex={-1}>Analytics</h1>
      </div>
      <SelectField label="Source" value={source} onValue={setSource} options={(sources.value ?? [{ id: 'uploads', label: 'Uploaded documents' }]).map((s) => [s.id, s.label] as const)} />
      {loaded.error && <Alert kind="error">{loaded.error}</Alert>}
      {!data && !loaded.error && <p class="loading">Loading…</p>}
      {data && (
        <div class="analytics-grid">
          <Histogram title="Chunk sizes (characters)" data={data.sizes} />
          <Histogram title="Chunks per document" data={data.perDocument} />
          <section class="panel stack" aria-labelledby="coverage-title">
            <h2 id="coverage-title">Metadata coverage</h2>
            {data.fields.fields.length === 0 && <p class="muted">No rules for this source.</p>}
            <ul class="stack">
              {data.fields.fields.map((field) => (
                <li key={field.field_name}>
                  {field.field_name}: {percent(field.coverage)} of chunks, {field.distinct_values} values
                  <div class="ratio-bar" role="img" aria-label={`${field.field_name} coverage ${percent(field.coverage)}`}><span class="self" style={{ width: percent(field.coverage) }} /></div>
                </li>
              ))}
            </ul>
          </section>
          <section class="panel stack" aria-labelledby="hits-title">
            <h2 id="hits-title">Rule hit rates</h2>
            <ul class="stack">
              {data.hits.rules.map((rule) => (
                <li key={rule.rule_id}>{rule.field_name} ({rule.level}): {percent(rule.chunk_rate)} of chunks, {percent(rule.document_rate)} of documents</li>
              ))}
            </ul>
          </section>
          <section class="panel stack" aria-labelledby="inheritance-title">
            <h2 id="inheritance-title">Inheritance</h2>
            <ul class="stack">
              {data.inherited.fields.map((field) => (
                <li key={field.field_name}>
                  {field.field_name}: {percent(field.self_ratio)} matched, {percent(field.inherited_ratio)} inherited, {percent(field.document_level_ratio)} document level, {percent(field.empty_ratio)} empty
                  <div class="ratio-bar" aria-hidden="true">
                    <span class="self" style={{ width: percent(field.self_ratio) }} />
                    <span class="inherited" style={{ width: percent(field.inherited_ratio) }} />
                    <span class="document" style={{ width: percent(field.document_level_ratio) }} />
                  </div>
                </li>
              ))}
            </ul>
          </section>
          <section class="panel stack" aria-labelledby="empty-title">
            <h2 id="empty-title">Chunks without metadata</h2>
            <p>{data.empty.empty_chunks.toLocaleString()} of {data.empty.chunks_total.toLocaleString()} ({percent(data.empty.empty_ratio)})</p>
          </section>
        </div>
      )}
    </section>
  );
}

function Histogram({ title, data }: { title: string; data: Distribution }) {
  const peak = Math.max(1, ...data.buckets.map((bucket) => bucket.count));
  return (
    <section class="panel stack" aria-label={title}>
      <h2>{title}</h2>
      {data.count === 0 ? <p class="muted">Nothing indexed yet.</p> : (
        <>
          <div class="histogram" role="img" aria-label={`${title}: ${data.count} values from ${data.min} to ${data.max}`}>
            {data.buckets.map((bucket) => <span key={bucket.from} class="bar" title={`${bucket.from}–${bucket.to - 1}: ${bucket.count}`} style={{ height: `${(bucket.count / peak) * 100}%` }} />)}
          </div>
          <p class="muted">count {data.count} · min {data.min} · median {data.median} · mean {data.mean} · p90 {data.p90} · max {data.max}</p>
        </>
      )}
    </section>
  );
}

import { sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { BoundedMap } from '../../core/bounded-map.js';
import { CHUNKS_PER_WORDS_ROW } from '../../core/db/chunk-words.js';
import { prepared } from '../../core/db/prepared.js';
import { readableBy } from '../groups/index.js';
import { probedFrequency, quoteTerm, type RankedMatch } from './keyword-query.js';

/** A chunk as search returns it, with its document's filename. */
export interface ChunkHit {
  rowid: number;
  chunk_id: string;
  document_id: string;
  filename: string;
  page: number | null;
  heading: string | null;
  text: string;
}

interface RankedRowid {
  rowid: number;
  /** -bm25: higher is better. */
  score: number;
  /** The chunk's document. */
  document_id: string;
}

/** Restricts which chunks may be returned; an absent field does not restrict. */
export interface SearchFilters {
  document_ids?: string[];
  /** Chunks whose metadata (metadata rules) has each of these values; applied inside the keyword SQL and the vector search. */
  metadata?: Array<{ field: string; value: string }>;
}

/** Who reads and what they narrowed it to: every query of content takes it. */
export interface ReadScope extends SearchFilters {
  /** The reader's groups (documents.groups must name one of them): never absent. */
  groups: string[];
}

/**
 * Rowids of the chunks that have every (field, value) of $meta (a JSON array, or null for no condition).
 * Uncorrelated: SQLite builds the set once per query from the (field_name, value) index.
 */
const metadataRowids = () => sql`select m.chunk_rowid from chunk_metadata m
  join json_each(${'$meta'}) f on m.field_name = json_extract(f.value, '$.field') and m.value = json_extract(f.value, '$.value')
  group by m.chunk_rowid having count(*) = json_array_length(${'$meta'})`;

const metadataParam = (metadata: SearchFilters['metadata']) => (metadata?.length ? JSON.stringify(metadata) : null);

/** The access keys a reader may read (null: every indexed document). */
export interface ReadableKeys {
  keys: Uint32Array | null;
}

/** Reader scopes (group sets) whose readable keys are kept at once. */
const READABLE_CACHE = 64;
/** Query terms whose probed frequencies are kept at once: query words repeat (a few are asked about often). */
const FREQUENCY_CACHE = 4096;

/** A ranking may skip the per-match access test: the reader may read every indexed document and asked for no subset. */
const unfiltered = (scope: ReadScope, readsAll: boolean) => readsAll && !scope.document_ids;

/** Parameters of the access conditions, shared by the prepared queries below. */
const scopeParams = (scope: ReadScope) => ({
  groups: JSON.stringify(scope.groups),
  documentIds: scope.document_ids ? JSON.stringify(scope.document_ids) : null,
});

/**
 * The keyword index's state for hearth_bm25, read in the ranking's own statement (once: the subquery is constant):
 * FTS5's structure record, which changes with every write to the index. While it is the same, hearth_bm25 keeps each
 * scored row's length instead of reading it from the docsize table again (native/keyword-rank).
 */
const indexState = sql`(select block from chunks_fts_data where id = 10)`;

/** The same for the whole-document ranking's index: there hearth_bm25 counts each word's documents itself (null), as bm25() does. */
const documentsIndexState = sql`(select block from documents_fts_data where id = 10)`;

/** SQL of retrieval, reads only: FTS5 keyword ranking over chunks_fts and chunk lookups by rowid, each compiled once. */
export class RetrievalRepository {
  private readonly span;
  private readonly probe;
  private readonly floor;
  private readonly ranked;
  private readonly chunks;
  private readonly keys;
  private readonly rankedDocuments;
  private readonly rankedDocumentsAll;
  private readonly stamp;
  private readonly documentWords;
  private readonly chunkAtPosition;
  private readonly vocabularyById;
  private readonly vocabularyByWord;
  /** readableKeys per reader scope, valid while nothing was written (see stamp): a search does not scan every document. */
  private readonly readable = new Map<string, { stamp: string; keys: ReadableKeys }>();
  /**
   * termFrequencies per term and cap while the keyword index is unchanged (cleared when its stamp moves), so a
   * plan is the same as if probed afresh. Not the database's write stamp: a chat turn writes its conversation.
   */
  private readonly frequencies: { stamp: Buffer; byTerm: BoundedMap<string, number> } = { stamp: Buffer.alloc(0), byTerm: new BoundedMap(FREQUENCY_CACHE) };
  private readonly keywordStamp;
  private readonly metadataRowids;

  constructor(private readonly db: Db) {
    const run = db as never;
    // Two subqueries: SQLite reads min() and max() off the rowid b-tree only when each stands alone.
    this.span = prepared<{ first: number | null; last: number | null }, Record<string, never>>(
      run,
      sql<{ first: number | null; last: number | null }>`select (select min(rowid) from chunks) as first, (select max(rowid) from chunks) as last`.compile(db),
    );
    this.probe = prepared<{ n: number; last: number | null }, { match: string; cap: number }>(
      run,
      sql<{ n: number; last: number | null }>`select count(*) as n, max(rowid) as last from (select rowid from chunks_fts where chunks_fts match ${'$match'} limit ${'$cap'})`.compile(db),
    );
    this.floor = prepared<{ rowid: number }, { match: string; offset: number; meta: string | null }>(
      run,
      sql<{ rowid: number }>`select rowid from chunks_fts where chunks_fts match ${'$match'}
        and (${'$meta'} is null or rowid in (${metadataRowids()})) order by rowid desc limit 1 offset ${'$offset'}`.compile(db),
    );
    const visible = sql`d.status = 'indexed' and ${readableBy('d.groups', '$groups')}
      and (${'$documentIds'} is null or d.id in (select value from json_each(${'$documentIds'})))`;
    // hearth_bm25() is FTS5's bm25() given each phrase's document frequency (native/keyword-rank), which bm25() would
    // count first by reading every phrase's whole doclist. ORDER BY it rather than rank: FTS5's rank sorter scores
    // every match and ignores the rowid bound.
    // The reader's access is a condition of the ranking itself: rows they may not read are never ranked (nor scored).
    // hearth_chunk_readable() tests a match's document against the access keys the reader may read (readableKeys, the
    // same set the vector search filters by), each chunk's key kept once read, instead of joining every match to its
    // chunk and document: about a microsecond a match. $keys null: the reader may read every indexed document, and a
    // chunk of a document that is not indexed any more drops when its row is looked up (chunksByRowid).
    // Each ranked row's document is read after the limit, from the narrow index (0016): a few rows, not every match.
    this.ranked = prepared<{ rowid: number; bm25: number; document_id: string }, { match: string; frequencies: Buffer; minRowid: number; limit: number; keys: Buffer | null; meta: string | null }>(
      run,
      sql<{ rowid: number; bm25: number; document_id: string }>`select r.rowid as rowid, r.bm25 as bm25, c.document_id as document_id from (
          select rowid, hearth_bm25(chunks_fts, ${'$frequencies'}, ${indexState}) as bm25 from chunks_fts
          where chunks_fts match ${'$match'} and rowid >= ${'$minRowid'}
            and (${'$keys'} is null or hearth_chunk_readable(rowid, ${'$keys'}))
            and (${'$meta'} is null or rowid in (${metadataRowids()}))
          order by bm25 limit ${'$limit'}
        ) r cross join chunks c indexed by chunks_document_by_rowid on c.rowid = r.rowid
        order by r.bm25`.compile(db),
    );
    // Whole documents by bm25 over all their text (migration 0018), among those the reader may read: one row per
    // document, so a document is ranked once however many of its chunks match.
    this.rankedDocuments = prepared<{ document_id: string; bm25: number }, { match: string; limit: number; groups: string; documentIds: string | null }>(
      run,
      sql<{ document_id: string; bm25: number }>`select k.document_id as document_id, hearth_bm25(documents_fts, null, ${documentsIndexState}) as bm25 from documents_fts
        cross join document_keywords k on k.id = documents_fts.rowid
        cross join documents d on d.id = k.document_id
        where documents_fts match ${'$match'} and ${visible}
        order by bm25 limit ${'$limit'}`.compile(db),
    );
    // The same for a reader who may read every indexed document: no access test per match, and the document's id is
    // read after the limit (a document that is not indexed any more drops when its chunks are looked up).
    this.rankedDocumentsAll = prepared<{ document_id: string; bm25: number }, { match: string; limit: number }>(
      run,
      sql<{ document_id: string; bm25: number }>`select k.document_id as document_id, r.bm25 as bm25 from (
          select rowid, hearth_bm25(documents_fts, null, ${documentsIndexState}) as bm25 from documents_fts where documents_fts match ${'$match'} order by bm25 limit ${'$limit'}
        ) r cross join document_keywords k on k.id = r.rowid
        order by r.bm25`.compile(db),
    );
    // Soft term matching's reads (migration 0019): a document's first words rows (one range of the key), and the
    // vocabulary both ways.
    this.documentWords = prepared<{ counts: Buffer; words: Buffer }, { document: string; pieces: number }>(
      run,
      sql<{ counts: Buffer; words: Buffer }>`select counts, words from document_words where document_id = ${'$document'} and piece < ${'$pieces'} order by piece`.compile(db),
    );
    // The index on (document_id, ordinal) walks a document's chunks in reading order, as document_words numbers them.
    this.chunkAtPosition = prepared<{ rowid: number }, { document: string; position: number }>(
      run,
      sql<{ rowid: number }>`select rowid from chunks where document_id = ${'$document'} order by ordinal limit 1 offset ${'$position'}`.compile(db),
    );
    this.vocabularyById = prepared<{ id: number; word: string }, { ids: string }>(
      run,
      sql<{ id: number; word: string }>`select id, word from vocabulary where id in (select value from json_each(${'$ids'}))`.compile(db),
    );
    this.vocabularyByWord = prepared<{ id: number; word: string }, { words: string }>(
      run,
      sql<{ id: number; word: string }>`select id, word from vocabulary where word in (select value from json_each(${'$words'}))`.compile(db),
    );
    // Changes to any table by this connection, and commits by other connections: what the keys cache is stamped with.
    this.stamp = prepared<{ changes: number; version: number }, Record<string, never>>(
      run,
      sql<{ changes: number; version: number }>`select total_changes() as changes, (select data_version from pragma_data_version) as version`.compile(db),
    );
    // FTS5's structure record (rowid 10 of its data table: the segments that make up the index) changes with
    // every write to the index, and only then: inserted, updated or deleted chunks, and merges.
    this.keywordStamp = prepared<{ block: Buffer }, Record<string, never>>(run, sql<{ block: Buffer }>`select block from chunks_fts_data where id = 10`.compile(db));
    this.keys = prepared<{ key: number; readable: number }, { groups: string; documentIds: string | null }>(
      run,
      sql<{ key: number; readable: number }>`select d.access_key as key, ${visible} as readable from documents d where d.status = 'indexed'`.compile(db),
    );
    // CROSS JOIN keeps the rowid list as the outer loop (else SQLite scans every indexed document's chunks).
    this.chunks = prepared<ChunkHit, { rowids: string; documentIds: string | null; groups: string }>(
      run,
      sql<ChunkHit>`select c.rowid as rowid, c.id as chunk_id, c.document_id, d.filename, c.page, c.heading, c.text
        from json_each(${'$rowids'}) wanted
        cross join chunks c on c.rowid = wanted.value
        cross join documents d on d.id = c.document_id
        where ${visible}`.compile(db),
    );
    this.metadataRowids = prepared<{ chunk_rowid: number }, { meta: string }>(run, sql<{ chunk_rowid: number }>`${metadataRowids()}`.compile(db));
  }

  /** The chunks that pass a metadata filter: what the vector search may return. */
  async rowidsWithMetadata(conditions: NonNullable<SearchFilters['metadata']>): Promise<Set<number>> {
    const rows = await this.metadataRowids({ meta: JSON.stringify(conditions) });
    return new Set(rows.map((row) => row.chunk_rowid));
  }

  /** Chunks containing each term, counted up to `cap` and estimated beyond it (see probedFrequency): a common term costs no more than a rare one. */
  async termFrequencies(terms: string[], cap: number): Promise<number[]> {
    if (!terms.length) return [];
    const [stamp] = await this.keywordStamp({});
    const cache = this.frequencies;
    if (!stamp || !cache.stamp.equals(stamp.block)) {
      cache.byTerm.clear();
      cache.stamp = stamp?.block ?? Buffer.alloc(0);
    }
    let rowids: { first: number | null; last: number | null } | undefined;
    const frequencies: number[] = [];
    for (const term of terms) {
      const key = `${cap}\n${term}`;
      let frequency = cache.byTerm.get(key);
      if (frequency === undefined) {
        rowids ??= (await this.span({}))[0];
        cache.byTerm.set(key, (frequency = probedFrequency((await this.probe({ match: quoteTerm(term), cap }))[0], cap, rowids)));
      }
      frequencies.push(frequency);
    }
    return frequencies;
  }

  /**
   * The words rows (migration 0019) of these documents, document by document in the order given, each's in reading
   * order, until they hold `budget` chunks (the last document's rows may hold more); a document without any is left out.
   */
  async documentWordsOf(documentIds: string[], budget: number): Promise<Array<{ document_id: string; counts: Buffer; words: Buffer }>> {
    const rows: Array<{ document_id: string; counts: Buffer; words: Buffer }> = [];
    let chunks = 0;
    for (const document of documentIds) {
      if (chunks >= budget) break;
      for (const row of await this.documentWords({ document, pieces: Math.ceil((budget - chunks) / CHUNKS_PER_WORDS_ROW) })) {
        rows.push({ document_id: document, ...row });
        chunks += row.counts.length >> 2;
      }
    }
    return rows;
  }

  /**
   * The rowids of chunks named by their document and their place in its reading order (0: its first chunk), as
   * document_words numbers them; a place the document does not have is left out.
   */
  async chunksAt<Place extends { document_id: string; position: number }>(places: Place[]): Promise<Array<Place & { rowid: number }>> {
    const found: Array<Place & { rowid: number }> = [];
    for (const place of places) {
      const [row] = await this.chunkAtPosition({ document: place.document_id, position: place.position });
      if (row) found.push({ ...place, rowid: row.rowid });
    }
    return found;
  }

  /** The words of these vocabulary ids (those that exist). */
  async vocabularyWords(ids: number[]): Promise<Array<{ id: number; word: string }>> {
    return ids.length ? this.vocabularyById({ ids: JSON.stringify(ids) }) : [];
  }

  /** The vocabulary ids of these words (those it holds). */
  async vocabularyIds(words: string[]): Promise<Array<{ id: number; word: string }>> {
    return words.length ? this.vocabularyByWord({ words: JSON.stringify(words) }) : [];
  }

  /** Rowid of the (offset+1)-th newest match, or 0 when fewer rows match. */
  async newestMatchFloor(match: string, offset: number, metadata?: SearchFilters['metadata']): Promise<number> {
    return (await this.floor({ match, offset, meta: metadataParam(metadata) }))[0]?.rowid ?? 0;
  }

  /**
   * Best bm25 matches first among the chunks of the documents with these access keys (readableKeys; null: every indexed
   * document) that pass the metadata filter, at or above `minRowid`. Text and heading weigh the same.
   * `phraseFrequencies`: the matching chunks of each phrase of `match`, in its order (termFrequencies).
   */
  async keywordRanked(query: RankedMatch, limit: number, keys: Uint32Array | null, options: { minRowid?: number; metadata?: SearchFilters['metadata'] } = {}): Promise<RankedRowid[]> {
    const { match } = query;
    const frequencies = Buffer.from(Float64Array.from(query.phraseFrequencies).buffer);
    const rows = await this.ranked({ match, frequencies, minRowid: options.minRowid ?? 0, limit, keys: keys && Buffer.from(keys.buffer, keys.byteOffset, keys.byteLength), meta: metadataParam(options.metadata) });
    return rows.map((row) => ({ rowid: row.rowid, score: -row.bm25, document_id: row.document_id }));
  }

  /** Documents the scope may read, best bm25 over their whole text first (-bm25: higher is better). */
  async documentsRanked(match: string, limit: number, scope: ReadScope, readsAll = false): Promise<Array<{ document_id: string; score: number }>> {
    const rows = unfiltered(scope, readsAll) ? await this.rankedDocumentsAll({ match, limit }) : await this.rankedDocuments({ match, limit, ...scopeParams(scope) });
    return rows.map((row) => ({ document_id: row.document_id, score: -row.bm25 }));
  }

  /**
   * The access keys of the documents the scope may read: the vector search admits their chunks only.
   * Null when it may read every indexed document: the search then needs no filter (the unfiltered path).
   */
  async readableKeys(scope: ReadScope): Promise<ReadableKeys> {
    const params = scopeParams(scope);
    const key = `${params.groups}\n${params.documentIds ?? ''}`;
    const [now] = await this.stamp({});
    const stamp = `${now.changes}:${now.version}`;
    const kept = this.readable.get(key);
    if (kept?.stamp === stamp) return kept.keys;
    const rows = await this.keys(params);
    const readable = rows.filter((row) => row.readable);
    // Ascending: the keyword ranking looks a key up by bisection (hearth_chunk_readable).
    const keys: ReadableKeys = readable.length === rows.length ? { keys: null } : { keys: Uint32Array.from(readable, (row) => row.key).sort() };
    if (this.readable.size >= READABLE_CACHE) this.readable.clear();
    this.readable.set(key, { stamp, keys });
    return keys;
  }

  /** The chunks of these rowids that may be returned: their document is indexed and the scope may read it. */
  async chunksByRowid(rowids: number[], scope: ReadScope): Promise<ChunkHit[]> {
    if (!rowids.length) return [];
    return this.chunks({ rowids: JSON.stringify(rowids), ...scopeParams(scope) });
  }
}

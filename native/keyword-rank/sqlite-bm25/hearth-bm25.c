// hearth_bm25(fts_table, frequencies): FTS5's own bm25() (k1 1.2, b 0.75, every column weighing 1; the same
// formula, term for term, as fts5_aux.c) with one difference: each phrase's document frequency comes in as an
// argument (a blob of float64, one per phrase of the MATCH expression, in the expression's order) instead of being
// counted. bm25() counts it on its first row by a pass over each phrase's whole doclist, which for the few common
// words that refine a search's ranking reads up to 30,000 entries (~35 ns each) before any row is scored. Hearth
// already knows these frequencies: the query plan probes them (exact up to 1,001 matches, extrapolated beyond).
// Given the exact counts, its scores equal bm25()'s to 1e-13 and rank the same rows in the same order.
//
// Frequencies given as NULL are counted as bm25() counts them (the whole-document ranking's rare words: short doclists).
//
// An optional third argument names the index's state: any value that changes whenever the FTS5 index is written
// (Hearth passes its structure record, read in the same statement). While it stays the same, each row's length (its
// tokens over all columns) is kept per connection once read: reading it is a lookup in FTS5's docsize table, about
// a microsecond, half of what scoring a row costs. A different state empties the cache.
#include <math.h>
#include <string.h>
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

// Values by rowid (a row's length, a chunk's access key): open addressing, one map per connection. A slot is 8 bytes
// (the rowid as uint32, the value as int32) and the table at most half full: at 100k rows, 2 MiB.
typedef struct Slot {
  unsigned int rowid;
  int value;  // -1: an empty slot
} Slot;

typedef struct RowMap {
  Slot* slots;
  sqlite3_uint64 capacity;  // a power of two, or 0 before the first row
  sqlite3_uint64 used;
} RowMap;

// Rows kept at most (16 MiB of slots); past it the map starts afresh.
static const sqlite3_uint64 kMaxKeptRows = 1u << 20;

static void rowmap_clear(RowMap* map) {
  sqlite3_free(map->slots);
  memset(map, 0, sizeof *map);
}

static int keepable(sqlite3_int64 rowid) {
  return rowid >= 0 && rowid <= 0xffffffffLL;
}

static sqlite3_uint64 slot_of(unsigned int rowid, sqlite3_uint64 capacity) {
  sqlite3_uint64 x = (sqlite3_uint64)rowid * 0x9E3779B97F4A7C15ull;
  return (x ^ (x >> 29)) & (capacity - 1);
}

// The value kept for a row, or -1 (also for a rowid a slot cannot hold: never kept, read every time).
static int rowmap_get(const RowMap* map, sqlite3_int64 rowid) {
  if (!map->capacity || !keepable(rowid)) return -1;
  for (sqlite3_uint64 i = slot_of((unsigned int)rowid, map->capacity);; i = (i + 1) & (map->capacity - 1)) {
    if (map->slots[i].value < 0) return -1;
    if (map->slots[i].rowid == (unsigned int)rowid) return map->slots[i].value;
  }
}

// Keeps a row's value (0 or more); out of memory it keeps nothing (the value is read again next time).
static void rowmap_put(RowMap* map, sqlite3_int64 rowid, int value) {
  if (value < 0 || !keepable(rowid)) return;
  if (map->used >= kMaxKeptRows) rowmap_clear(map);
  if (2 * (map->used + 1) > map->capacity) {
    const sqlite3_uint64 capacity = map->capacity ? 2 * map->capacity : 4096;
    Slot* slots = (Slot*)sqlite3_malloc64(capacity * sizeof(Slot));
    if (!slots) return;
    for (sqlite3_uint64 i = 0; i < capacity; i++) slots[i].value = -1;
    for (sqlite3_uint64 i = 0; i < map->capacity; i++) {
      if (map->slots[i].value < 0) continue;
      sqlite3_uint64 j = slot_of(map->slots[i].rowid, capacity);
      while (slots[j].value >= 0) j = (j + 1) & (capacity - 1);
      slots[j] = map->slots[i];
    }
    sqlite3_free(map->slots);
    map->slots = slots;
    map->capacity = capacity;
  }
  sqlite3_uint64 i = slot_of((unsigned int)rowid, map->capacity);
  while (map->slots[i].value >= 0) i = (i + 1) & (map->capacity - 1);
  map->slots[i].rowid = (unsigned int)rowid;
  map->slots[i].value = value;
  map->used++;
}

// Row lengths of one connection, each set valid for one state of one index: two sets, so that the chunk ranking's and
// the document ranking's lengths (two tables, two states) do not evict each other on every search, while a state
// left behind by a write is the least recently used and the first replaced.
#define LENGTH_SETS 2
typedef struct Lengths {
  unsigned char* state;
  int state_bytes;
  sqlite3_uint64 used_at;  // the connection's clock when last used: the least recent set is the one replaced
  RowMap rows;
} Lengths;

typedef struct Connection {
  Lengths sets[LENGTH_SETS];
  sqlite3_uint64 clock;
} Connection;

static void connection_destroy(void* p) {
  Connection* connection = (Connection*)p;
  for (int i = 0; i < LENGTH_SETS; i++) {
    rowmap_clear(&connection->sets[i].rows);
    sqlite3_free(connection->sets[i].state);
  }
  sqlite3_free(connection);
}

// The lengths kept for this state of an index (a set emptied and taken over when none is), or 0 without a state.
static Lengths* lengths_for(Connection* connection, sqlite3_value* state) {
  const int bytes = sqlite3_value_bytes(state);
  const void* value = sqlite3_value_blob(state);
  if (!value || bytes <= 0) return 0;
  connection->clock++;
  Lengths* oldest = &connection->sets[0];
  for (int i = 0; i < LENGTH_SETS; i++) {
    Lengths* set = &connection->sets[i];
    if (set->state && set->state_bytes == bytes && memcmp(set->state, value, (size_t)bytes) == 0) {
      set->used_at = connection->clock;
      return set;
    }
    if (set->used_at < oldest->used_at) oldest = set;
  }
  rowmap_clear(&oldest->rows);
  sqlite3_free(oldest->state);
  oldest->state = (unsigned char*)sqlite3_malloc(bytes);
  oldest->state_bytes = oldest->state ? bytes : 0;
  if (!oldest->state) return 0;
  memcpy(oldest->state, value, (size_t)bytes);
  oldest->used_at = connection->clock;
  return oldest;
}

// Each phrase's inverse document frequency and the average row length, computed once per query (FTS5 keeps them as
// the function's auxdata for the statement's run), and the row length cache when a state was given.
typedef struct Weights {
  int phrases;
  double average_length;
  Lengths* lengths;
  double idf[];
} Weights;

static const double kK1 = 1.2;
static const double kB = 0.75;

// xQueryPhrase's callback: one call per row holding the phrase.
static int count_row(const Fts5ExtensionApi* api, Fts5Context* fts, void* count) {
  (void)api;
  (void)fts;
  (*(sqlite3_int64*)count)++;
  return SQLITE_OK;
}

static Weights* weights_of(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, sqlite3_value* frequencies, sqlite3_value* state) {
  Weights* w = (Weights*)api->xGetAuxdata(fts, 0);
  if (w) return w;
  const int phrases = api->xPhraseCount(fts);
  const int counted = sqlite3_value_type(frequencies) == SQLITE_NULL;
  if (!counted && (sqlite3_value_type(frequencies) != SQLITE_BLOB || sqlite3_value_bytes(frequencies) != phrases * (int)sizeof(double))) {
    sqlite3_result_error(ctx, "hearth_bm25: one float64 document frequency per phrase of the MATCH expected", -1);
    return 0;
  }
  sqlite3_int64 rows = 0, tokens = 0;
  int rc = api->xRowCount(fts, &rows);
  if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return 0;
  }
  w = (Weights*)sqlite3_malloc64(sizeof(Weights) + (sqlite3_uint64)phrases * sizeof(double));
  if (!w) {
    sqlite3_result_error_nomem(ctx);
    return 0;
  }
  w->phrases = phrases;
  w->lengths = state ? lengths_for((Connection*)api->xUserData(fts), state) : 0;
  w->average_length = rows > 0 ? (double)tokens / (double)rows : 1.0;
  const unsigned char* blob = (const unsigned char*)sqlite3_value_blob(frequencies);
  for (int i = 0; i < phrases; i++) {
    double hits = 0.0;
    if (counted) {
      // No frequencies given: counted as bm25() does, by a pass over the phrase's doclist.
      sqlite3_int64 rows_with_phrase = 0;
      rc = api->xQueryPhrase(fts, i, &rows_with_phrase, count_row);
      if (rc != SQLITE_OK) {
        sqlite3_free(w);
        sqlite3_result_error_code(ctx, rc);
        return 0;
      }
      hits = (double)rows_with_phrase;
    } else {
      memcpy(&hits, blob + i * sizeof(double), sizeof hits);
    }
    double idf = log(((double)rows - hits + 0.5) / (hits + 0.5));
    w->idf[i] = idf <= 0.0 ? 1e-6 : idf;
  }
  rc = api->xSetAuxdata(fts, w, sqlite3_free);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return 0;
  }
  return w;
}

static void hearth_bm25(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (argc != 1 && argc != 2) {
    sqlite3_result_error(ctx, "hearth_bm25: expects the table, one blob of document frequencies and optionally the index's state", -1);
    return;
  }
  Weights* w = weights_of(api, fts, ctx, argv[0], argc == 2 ? argv[1] : 0);
  if (!w) return;
  double stack[64];
  double* frequency = w->phrases <= 64 ? stack : (double*)sqlite3_malloc64((sqlite3_uint64)w->phrases * sizeof(double));
  if (!frequency) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  memset(frequency, 0, (size_t)w->phrases * sizeof(double));
  // Each phrase's hits in this row, phrase by phrase (xInst would first merge every phrase's hits into one sorted list).
  int rc = SQLITE_OK;
  for (int p = 0; rc == SQLITE_OK && p < w->phrases; p++) {
    Fts5PhraseIter hits;
    int column = -1, offset = 0;
    rc = api->xPhraseFirst(fts, p, &hits, &column, &offset);
    for (; rc == SQLITE_OK && column >= 0; api->xPhraseNext(fts, &hits, &column, &offset)) frequency[p] += 1.0;
  }
  const sqlite3_int64 rowid = api->xRowid(fts);
  int length = w->lengths ? rowmap_get(&w->lengths->rows, rowid) : -1;
  if (rc == SQLITE_OK && length < 0) {
    rc = api->xColumnSize(fts, -1, &length);
    if (rc == SQLITE_OK && w->lengths) rowmap_put(&w->lengths->rows, rowid, length);
  }
  if (rc == SQLITE_OK) {
    const double d = kK1 * (1.0 - kB + kB * (double)length / w->average_length);
    double score = 0.0;
    for (int i = 0; i < w->phrases; i++) score += w->idf[i] * (frequency[i] * (kK1 + 1.0)) / (frequency[i] + d);
    sqlite3_result_double(ctx, -1.0 * score);
  } else {
    sqlite3_result_error_code(ctx, rc);
  }
  if (frequency != stack) sqlite3_free(frequency);
}

// hearth_chunk_readable(chunk_rowid, keys): 1 when the chunk's document has one of the access keys in `keys` (a blob
// of uint32, ascending: the documents a reader may read, as Hearth computes them for the vector search's filter), else
// 0. It stands in for joining each keyword match to its chunk and its document to test the reader's groups, about a
// microsecond a match. A chunk's document, and a document's access key, never change (chunks.rowid is AUTOINCREMENT,
// so a rowid never names a second chunk), so each chunk's key is kept per connection once read, with no expiry.
// A chunk without a row or a document is admitted by no keys and not kept.
static const char kChunkKeySql[] = "SELECT d.access_key FROM chunks c INDEXED BY chunks_document_by_rowid JOIN documents d ON d.id = c.document_id WHERE c.rowid = ?1";
// Every chunk's key at once, read on the connection's first call: one pass (about 30 ms at 100k chunks) instead of a
// statement step per chunk seen for the first time, which would cost more than the join it replaces until most chunks
// had been seen. Chunks written later are read one by one.
static const char kAllChunkKeysSql[] = "SELECT c.rowid, d.access_key FROM chunks c INDEXED BY chunks_document_by_rowid JOIN documents d ON d.id = c.document_id";

// The access key in a result column, or -1 when there is none a slot can hold.
static int access_key_at(sqlite3_stmt* statement, int column) {
  if (sqlite3_column_type(statement, column) != SQLITE_INTEGER) return -1;
  const sqlite3_int64 key = sqlite3_column_int64(statement, column);
  return key >= 0 && key <= 0x7fffffff ? (int)key : -1;
}

// The chunk keys of one connection.
typedef struct ChunkKeys {
  RowMap rows;
  int loaded;  // the whole-table pass was made (or could not be: then chunks are read one by one)
} ChunkKeys;

// Keeps every chunk's key, unless there are more than the map may hold (then they are read as they are met).
static void chunk_keys_load(sqlite3* db, ChunkKeys* keys) {
  keys->loaded = 1;
  sqlite3_stmt* all = 0;
  if (sqlite3_prepare_v2(db, kAllChunkKeysSql, -1, &all, 0) != SQLITE_OK) return;
  while (sqlite3_step(all) == SQLITE_ROW) {
    if (keys->rows.used >= kMaxKeptRows / 2) {
      rowmap_clear(&keys->rows);
      break;
    }
    rowmap_put(&keys->rows, sqlite3_column_int64(all, 0), access_key_at(all, 1));
  }
  sqlite3_finalize(all);
}

// The statement that reads a chunk's key, prepared on the first chunk not kept in a statement's run and finalized at
// its end (SQLite keeps it as the keys argument's auxdata, or finalizes it at once when it cannot keep it).
typedef struct KeyLookup {
  sqlite3_stmt* statement;
} KeyLookup;

static void key_lookup_destroy(void* p) {
  KeyLookup* lookup = (KeyLookup*)p;
  sqlite3_finalize(lookup->statement);
  sqlite3_free(lookup);
}

static void chunk_keys_destroy(void* p) {
  rowmap_clear(&((ChunkKeys*)p)->rows);
  sqlite3_free(p);
}

static int has_key(const unsigned char* keys, int count, unsigned int key) {
  int low = 0, high = count - 1;
  while (low <= high) {
    const int middle = low + (high - low) / 2;
    unsigned int value;
    memcpy(&value, keys + (size_t)middle * sizeof value, sizeof value);
    if (value == key) return 1;
    if (value < key) low = middle + 1;
    else high = middle - 1;
  }
  return 0;
}

static void hearth_chunk_readable(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  (void)argc;
  const int bytes = sqlite3_value_bytes(argv[1]);
  if ((sqlite3_value_type(argv[1]) != SQLITE_BLOB && sqlite3_value_type(argv[1]) != SQLITE_NULL) || bytes % (int)sizeof(unsigned int) != 0) {
    sqlite3_result_error(ctx, "hearth_chunk_readable: the keys must be a blob of uint32", -1);
    return;
  }
  if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER || bytes == 0) {
    sqlite3_result_int(ctx, 0);
    return;
  }
  const sqlite3_int64 rowid = sqlite3_value_int64(argv[0]);
  ChunkKeys* keys = (ChunkKeys*)sqlite3_user_data(ctx);
  if (!keys->loaded) chunk_keys_load(sqlite3_context_db_handle(ctx), keys);
  RowMap* kept = &keys->rows;
  int key = rowmap_get(kept, rowid);
  if (key < 0) {
    KeyLookup* lookup = (KeyLookup*)sqlite3_get_auxdata(ctx, 1);
    sqlite3_stmt* statement = lookup ? lookup->statement : 0;
    if (!statement) {
      const int rc = sqlite3_prepare_v2(sqlite3_context_db_handle(ctx), kChunkKeySql, -1, &statement, 0);
      if (rc != SQLITE_OK) {
        sqlite3_result_error_code(ctx, rc);
        return;
      }
    }
    sqlite3_bind_int64(statement, 1, rowid);
    const int rc = sqlite3_step(statement);
    if (rc == SQLITE_ROW) {
      key = access_key_at(statement, 0);
      rowmap_put(kept, rowid, key);
    }
    sqlite3_reset(statement);
    if (!lookup) {
      // Kept for the rest of the statement's run while the keys argument is a constant (a bound parameter); else,
      // or out of memory, finalized at once.
      lookup = (KeyLookup*)sqlite3_malloc(sizeof(KeyLookup));
      if (lookup) {
        lookup->statement = statement;
        sqlite3_set_auxdata(ctx, 1, lookup, key_lookup_destroy);
      } else {
        sqlite3_finalize(statement);
      }
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      sqlite3_result_error_code(ctx, rc);
      return;
    }
  }
  sqlite3_result_int(ctx, key >= 0 && has_key((const unsigned char*)sqlite3_value_blob(argv[1]), bytes / (int)sizeof(unsigned int), (unsigned int)key));
}

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_hearthbm25_init(sqlite3* db, char** error, const sqlite3_api_routines* routines) {
  SQLITE_EXTENSION_INIT2(routines);
  fts5_api* fts5 = 0;
  sqlite3_stmt* statement = 0;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, 0) == SQLITE_OK) {
    sqlite3_bind_pointer(statement, 1, (void*)&fts5, "fts5_api_ptr", 0);
    sqlite3_step(statement);
  }
  sqlite3_finalize(statement);
  if (!fts5 || fts5->iVersion < 2) {
    *error = sqlite3_mprintf("hearth_bm25: this SQLite has no FTS5");
    return SQLITE_ERROR;
  }
  Connection* connection = (Connection*)sqlite3_malloc(sizeof(Connection));
  if (!connection) return SQLITE_NOMEM;
  memset(connection, 0, sizeof *connection);
  int rc = fts5->xCreateFunction(fts5, "hearth_bm25", connection, hearth_bm25, connection_destroy);
  if (rc != SQLITE_OK) return rc;
  ChunkKeys* keys = (ChunkKeys*)sqlite3_malloc(sizeof(ChunkKeys));
  if (!keys) return SQLITE_NOMEM;
  memset(keys, 0, sizeof *keys);
  // Not SQLITE_DETERMINISTIC: the answer for a rowid depends on the tables (a chunk not yet written reads as 0).
  return sqlite3_create_function_v2(db, "hearth_chunk_readable", 2, SQLITE_UTF8, keys, hearth_chunk_readable, 0, 0, chunk_keys_destroy);
}

// hearth_bm25(fts_table, frequencies): FTS5's own bm25() (k1 1.2, b 0.75, every column weighing 1; the same
// formula, term for term, as fts5_aux.c) with one difference: each phrase's document frequency comes in as an
// argument (a blob of float64, one per phrase of the MATCH expression, in the expression's order) instead of being
// counted. bm25() counts it on its first row by a pass over each phrase's whole doclist, which for the few common
// words that refine a search's ranking reads up to 30,000 entries (~35 ns each) before any row is scored. Hearth
// already knows these frequencies: the query plan probes them (exact up to 1,001 matches, extrapolated beyond).
// Given the exact counts, its scores equal bm25()'s to 1e-13 and rank the same rows in the same order.
#include <math.h>
#include <string.h>
#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

// Each phrase's inverse document frequency and the average row length, computed once per query (FTS5 keeps them as
// the function's auxdata for the statement's run).
typedef struct Weights {
  int phrases;
  double average_length;
  double idf[];
} Weights;

static const double kK1 = 1.2;
static const double kB = 0.75;

static Weights* weights_of(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, sqlite3_value* frequencies) {
  Weights* w = (Weights*)api->xGetAuxdata(fts, 0);
  if (w) return w;
  const int phrases = api->xPhraseCount(fts);
  if (sqlite3_value_type(frequencies) != SQLITE_BLOB || sqlite3_value_bytes(frequencies) != phrases * (int)sizeof(double)) {
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
  w->average_length = rows > 0 ? (double)tokens / (double)rows : 1.0;
  const unsigned char* blob = (const unsigned char*)sqlite3_value_blob(frequencies);
  for (int i = 0; i < phrases; i++) {
    double hits;
    memcpy(&hits, blob + i * sizeof(double), sizeof hits);
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
  if (argc != 1) {
    sqlite3_result_error(ctx, "hearth_bm25: expects the table and one blob of document frequencies", -1);
    return;
  }
  Weights* w = weights_of(api, fts, ctx, argv[0]);
  if (!w) return;
  double stack[64];
  double* frequency = w->phrases <= 64 ? stack : (double*)sqlite3_malloc64((sqlite3_uint64)w->phrases * sizeof(double));
  if (!frequency) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  memset(frequency, 0, (size_t)w->phrases * sizeof(double));
  int instances = 0, length = 0;
  int rc = api->xInstCount(fts, &instances);
  for (int i = 0; rc == SQLITE_OK && i < instances; i++) {
    int phrase, column, offset;
    rc = api->xInst(fts, i, &phrase, &column, &offset);
    if (rc == SQLITE_OK) frequency[phrase] += 1.0;
  }
  if (rc == SQLITE_OK) rc = api->xColumnSize(fts, -1, &length);
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
  return fts5->xCreateFunction(fts5, "hearth_bm25", 0, hearth_bm25, 0);
}

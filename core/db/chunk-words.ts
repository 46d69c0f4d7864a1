import type { Kysely } from 'kysely';
import { contentWords } from '../text/words.js';
import type { Database } from './schema.js';

/** Words a statement binds at most (SQLite allows 32,766 parameters). */
const WORDS_PER_STATEMENT = 500;

/**
 * Each text's distinct content words (core/text/words.ts) as vocabulary ids, the words the vocabulary lacks added
 * (within the caller's transaction: a rolled-back write leaves no ids behind).
 */
export async function vocabularyIds(db: Kysely<Database>, texts: string[]): Promise<Int32Array[]> {
  const perText = texts.map(contentWords);
  const distinct = [...new Set(perText.flat())];
  const idOf = new Map<string, number>();
  for (let i = 0; i < distinct.length; i += WORDS_PER_STATEMENT) {
    const rows = await db.selectFrom('vocabulary').select(['id', 'word']).where('word', 'in', distinct.slice(i, i + WORDS_PER_STATEMENT)).execute();
    for (const row of rows) idOf.set(row.word, row.id);
  }
  const missing = distinct.filter((word) => !idOf.has(word));
  for (let i = 0; i < missing.length; i += WORDS_PER_STATEMENT) {
    const slice = missing.slice(i, i + WORDS_PER_STATEMENT);
    // A word another writer added meanwhile (another process on the same file) is read back rather than refused.
    const rows = await db
      .insertInto('vocabulary')
      .values(slice.map((word) => ({ word })))
      .onConflict((conflict) => conflict.column('word').doNothing())
      .returning(['id', 'word'])
      .execute();
    for (const row of rows) idOf.set(row.word, row.id);
    const raced = slice.filter((word) => !idOf.has(word));
    if (raced.length) for (const row of await db.selectFrom('vocabulary').select(['id', 'word']).where('word', 'in', raced).execute()) idOf.set(row.word, row.id);
  }
  return perText.map((list) => Int32Array.from(list, (word) => idOf.get(word)!));
}

/** Chunks a document_words row holds at most: a search reads a long document's first rows only, as far as its budget goes. */
export const CHUNKS_PER_WORDS_ROW = 128;

/**
 * A document's words rows (document_words): each chunk's distinct content words as vocabulary ids, chunk after chunk in
 * reading order, CHUNKS_PER_WORDS_ROW chunks a row (`piece` 0, 1, …), with each chunk's count of them. Written once
 * all its chunks are (as its keyword row, migration 0018), within the caller's transaction; kept when it has them;
 * nothing for a document without chunks.
 */
export async function writeDocumentWords(db: Kysely<Database>, documentId: string): Promise<void> {
  if (await db.selectFrom('document_words').select('document_id').where('document_id', '=', documentId).limit(1).executeTakeFirst()) return;
  const chunks = await db.selectFrom('chunks').select('text').where('document_id', '=', documentId).orderBy('ordinal').execute();
  if (!chunks.length) return;
  const ids = await vocabularyIds(
    db,
    chunks.map((chunk) => chunk.text),
  );
  const rows = [];
  for (let first = 0; first < ids.length; first += CHUNKS_PER_WORDS_ROW) {
    const lists = ids.slice(first, first + CHUNKS_PER_WORDS_ROW);
    const words = new Int32Array(lists.reduce((sum, list) => sum + list.length, 0));
    let at = 0;
    for (const list of lists) {
      words.set(list, at);
      at += list.length;
    }
    rows.push({ document_id: documentId, piece: first / CHUNKS_PER_WORDS_ROW, counts: encodeWordIds(Int32Array.from(lists, (list) => list.length)), words: encodeWordIds(words) });
  }
  const rowsPerStatement = WORDS_PER_STATEMENT / 4; // four values a row
  for (let i = 0; i < rows.length; i += rowsPerStatement) await db.insertInto('document_words').values(rows.slice(i, i + rowsPerStatement)).execute();
}

/** Little-endian int32s (every platform Hearth builds for is little-endian). */
export const encodeWordIds = (ids: Int32Array) => Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength);

/** The int32s of a stored blob (ids, counts); copied when SQLite's buffer is not 4-byte aligned. */
export function decodeWordIds(blob: Uint8Array): Int32Array {
  if (blob.byteOffset % 4 === 0) return new Int32Array(blob.buffer, blob.byteOffset, blob.byteLength >> 2);
  return new Int32Array(Uint8Array.from(blob.subarray(0, blob.byteLength & ~3)).buffer);
}

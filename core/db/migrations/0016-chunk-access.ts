import { type Kysely, sql } from 'kysely';

/**
 * The access key of each chunk's document, in a narrow table keyed by the chunk's rowid: the filtered keyword
 * ranking (issue 18) reaches a match's document through it, where the chunk row itself (its text inline) costs
 * a read of the wide table for every match. At 100k chunks with half of them readable this took the filtered
 * ranking from ~4 to ~2.7 ms p50 (docs/groups.md). Kept by triggers: documents never change key or chunks
 * document, but both are followed anyway. A chunk whose document has no key yet gets none, and ranks for nobody.
 * Written to run again over its own result (a test replays the upgrade from 0014).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table if not exists chunk_access (chunk_rowid integer primary key, access_key integer)`.execute(db);
  await sql`insert or replace into chunk_access (chunk_rowid, access_key)
    select c.rowid, d.access_key from chunks c join documents d on d.id = c.document_id`.execute(db);
  await sql`create trigger if not exists chunk_access_insert after insert on chunks begin
    insert or replace into chunk_access (chunk_rowid, access_key) values (new.rowid, (select access_key from documents where id = new.document_id));
  end`.execute(db);
  await sql`create trigger if not exists chunk_access_delete after delete on chunks begin
    delete from chunk_access where chunk_rowid = old.rowid;
  end`.execute(db);
  await sql`create trigger if not exists chunk_access_move after update of document_id on chunks begin
    update chunk_access set access_key = (select access_key from documents where id = new.document_id) where chunk_rowid = new.rowid;
  end`.execute(db);
  await sql`create trigger if not exists chunk_access_rekey after update of access_key on documents begin
    update chunk_access set access_key = new.access_key where chunk_rowid in (select rowid from chunks where document_id = new.id);
  end`.execute(db);
}

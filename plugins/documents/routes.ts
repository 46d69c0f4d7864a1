import multipart, { type Multipart, type MultipartFile } from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../../core/auth/guard.js';
import { clock } from '../../core/clock.js';
import { badRequest, notFound } from '../../core/errors.js';
import { type Entitlement, tierAtLeast } from '../../core/tiers.js';
import type { DocumentRow } from './repository.js';
import { attachmentDisposition } from './service.js';
import { BulkDeleteBody, BulkDeleteResult, DocumentIdParams, DocumentList, DocumentView, ListDocumentsQuery, type PageWarning, UploadResult } from './schemas.js';

/** `groups`: below ENTERPRISE only everyone is shown, as for users (the stored groups still apply). */
function toDocumentView(row: DocumentRow, entitlement: Entitlement) {
  return {
    id: row.id,
    filename: row.filename,
    file_type: row.file_type,
    mime_type: row.mime_type,
    size_bytes: row.size_bytes,
    sha256: row.sha256,
    source_type: row.source_type,
    source_id: row.source_id,
    source_path: row.source_path,
    status: row.status,
    error: row.error,
    page_count: row.page_count,
    chunk_count: row.chunk_count,
    page_warnings: JSON.parse(row.page_warnings) as PageWarning[],
    groups: tierAtLeast(entitlement.tier(), 'ENTERPRISE') ? (JSON.parse(row.groups) as string[]) : ['everyone'],
    created_at: clock.iso(row.created_at),
    updated_at: clock.iso(row.updated_at),
    indexed_at: row.indexed_at === null ? null : clock.iso(row.indexed_at),
  };
}

const UPLOAD_FIELD = 'file';
/** @fastify/multipart's errors for a part past the upload's limits (one part, one file, one field). */
const EXTRA_PART = /^FST_(PARTS|FILES|FIELDS)_LIMIT$/;
/** A stored file is the uploader's content: if a browser ever renders it, it runs nothing and reaches nothing. */
const FILE_CSP = "default-src 'none'; sandbox; frame-ancestors 'none'";

export const documentsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/docs', {
    config: { access: { role: 'viewer' } },
    schema: { summary: 'List documents', tags: ['documents'], querystring: ListDocumentsQuery, response: { 200: DocumentList } },
  }, async (request) => {
    const groups = await app.groups.callerGroups(request);
    const { documents, total } = await app.documents.list(request.query, groups);
    return { documents: documents.map((row) => toDocumentView(row, app.entitlement)), total };
  });

  app.get('/api/docs/:id/file', {
    config: { access: { role: 'viewer' } },
    schema: {
      summary: "Download a document's stored file",
      description:
        'The original bytes (a connector document: the file in place), with the stored Content-Type, Content-Disposition: attachment, ' +
        'nosniff and a sandboxing CSP. 404 when the document or its file is gone, or the caller\'s groups may not read it.',
      tags: ['documents'],
      params: DocumentIdParams,
    },
  }, async (request, reply) => {
    const groups = await app.groups.callerGroups(request);
    const { document, stream, size } = await app.documents.openFile(request.params.id, groups);
    return reply
      .type(document.mime_type)
      .header('content-length', size)
      .header('content-disposition', attachmentDisposition(document.filename))
      .header('content-security-policy', FILE_CSP)
      .send(stream);
  });

  app.delete('/api/docs/bulk', {
    config: { access: { role: 'editor' } },
    schema: { summary: 'Delete several documents', tags: ['documents'], body: BulkDeleteBody, response: { 200: BulkDeleteResult } },
  }, async (request) => {
    const groups = await app.groups.callerGroups(request);
    const deleted = await app.documents.remove(await app.documents.readableIds(request.body.ids, groups));
    const found = new Set(deleted.map((document) => document.id));
    return { deleted: [...found], not_found: request.body.ids.filter((id) => !found.has(id)) };
  });

  app.delete('/api/docs/:id', {
    config: { access: { role: 'editor' } },
    schema: { summary: 'Delete a document, its chunks, vectors and stored file', tags: ['documents'], params: DocumentIdParams },
  }, async (request, reply) => {
    const groups = await app.groups.callerGroups(request);
    const deleted = await app.documents.remove(await app.documents.readableIds([request.params.id], groups));
    if (deleted.length === 0) throw notFound('Document');
    return reply.code(204).send();
  });

  // Multipart parsing exists only in this scope; the per-plan file size is applied per request.
  await app.register(async (upload) => {
    await upload.register(multipart, { limits: { files: 1, fields: 1, parts: 1, fieldNameSize: 100, headerPairs: 20 } });
    upload.post('/api/docs/upload', {
      config: { access: { role: 'editor' } },
      schema: {
        summary: 'Upload a document for indexing',
        description:
          'multipart/form-data with one part named "file" (with its filename), and nothing else. The type is detected from the content. Answers 202 with the ' +
          'document (status queued) and its indexing job. 400 multipart_malformed, filename_required, empty_file or one_file_only (a second part: nothing is stored); 413 over the plan ' +
          'file size (cut off as the bytes arrive), 403 plan_limit_exceeded over the document count or storage, 409 duplicate_document ' +
          'for a file already uploaded as a document the caller\'s groups may read (a copy they may not read is not named: the upload is taken), 415 for an unsupported type, 507 disk_full when the server has no space left.',
        tags: ['documents'],
        consumes: ['multipart/form-data'],
        response: { 202: UploadResult },
      },
    }, async (request, reply) => {
      const { file, nothingElse } = await uploadedFile(request, app.entitlement.limits().file_size_bytes);
      const uploader = principalOf(request).id;
      const document = await app.documents.upload(file.file, file.filename, uploader, await app.groups.readerGroups(uploader), nothingElse);
      app.diskFull.resolved();
      const job = await app.ingestion.enqueue([document.id]);
      request.log.info({ user: app.logPrivacy.caller(request), document: document.id, type: document.file_type }, 'document uploaded');
      return reply.code(202).send({ document: toDocumentView((await app.documents.find(document.id))!, app.entitlement), job });
    });
  });
};

/**
 * The one part named "file", with its filename, its bytes not yet read, and the check that nothing follows it (run
 * once its bytes are read, before the document is stored). busboy's own cut-off is set a
 * byte past the plan's file size, so that the service's meter sees the excess and answers 413 as the
 * bytes arrive instead of after reading (and discarding) the rest of the body.
 */
async function uploadedFile(request: FastifyRequest, fileSizeBytes: number): Promise<{ file: MultipartFile; nothingElse: () => Promise<void> }> {
  const required = badRequest('file_required', `Send the document as the multipart form field "${UPLOAD_FIELD}"`, `body.${UPLOAD_FIELD}`);
  if (!request.isMultipart()) throw required;
  const parts = request.parts({ limits: { fileSize: fileSizeBytes + 1 } });
  const { value: part } = (await parts.next()) as IteratorResult<Multipart, undefined>;
  if (part?.type === 'file' && part.fieldname === UPLOAD_FIELD && part.filename) {
    // Read once the file is: the body must end there. A second part (busboy stops at the parts limit) would otherwise
    // be dropped without a word while the first is stored.
    const nothingElse = async () => {
      const more = await parts.next().then(
        ({ done }) => !done,
        (error: { code?: string }) => {
          if (EXTRA_PART.test(error.code ?? '')) return true;
          throw error; // a body broken after the file: the error handler's multipart_malformed
        },
      );
      if (more) throw badRequest('one_file_only', `Send one part, the file "${UPLOAD_FIELD}": this body held more`, 'body');
    };
    return { file: part, nothingElse };
  }
  if (part?.type === 'file') part.file.resume(); // read and dropped, so the connection stays usable
  if (part?.fieldname !== UPLOAD_FIELD) throw required;
  // The part came as a plain field (no filename), or from a form submitted with no file chosen (filename="").
  throw badRequest('filename_required', `The "${UPLOAD_FIELD}" part must be a file with its filename`, `body.${UPLOAD_FIELD}`);
}

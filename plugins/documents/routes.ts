import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../core/auth/guard.js';
import { clock } from '../../core/clock.js';
import { notFound } from '../../core/errors.js';
import { ONE_FILE_LIMITS, oneFileUpload } from '../../core/one-file-upload.js';
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
    await upload.register(multipart, { limits: ONE_FILE_LIMITS });
    upload.post('/api/docs/upload', {
      config: { access: { role: 'editor' } },
      schema: {
        summary: 'Upload a document for indexing',
        description:
          'multipart/form-data with one part named "file" (with its filename), and nothing else. The type is detected from the content. Answers 202 with the ' +
          'document (status queued) and its indexing job. 400 multipart_malformed, filename_required, empty_file or one_file_only (a second part: nothing is stored); 413 over the plan ' +
          'file size (cut off as the bytes arrive), 403 plan_limit_exceeded over the document count or storage, 409 duplicate_document ' +
          'for a file already uploaded as a document the caller\'s groups may read (a copy they may not read is not named: the upload is taken), 415 for a body that is not multipart or a file of an unsupported type, 507 disk_full when the server has no space left.',
        tags: ['documents'],
        consumes: ['multipart/form-data'],
        response: { 202: UploadResult },
      },
    }, async (request, reply) => {
      // busboy's cut-off a byte past the plan's file size: the service's meter sees the excess and answers 413 as the
      // bytes arrive, instead of after reading (and discarding) the rest of the body.
      const { file, nothingElse } = await oneFileUpload(request, { field: 'file', what: 'document', fileSizeBytes: app.entitlement.limits().file_size_bytes + 1 });
      const uploader = principalOf(request).id;
      const document = await app.documents.upload(file.file, file.filename, uploader, await app.groups.readerGroups(uploader), nothingElse);
      app.diskFull.resolved();
      const job = await app.ingestion.enqueue([document.id]);
      request.log.info({ user: app.logPrivacy.caller(request), document: document.id, type: document.file_type }, 'document uploaded');
      return reply.code(202).send({ document: toDocumentView((await app.documents.find(document.id))!, app.entitlement), job });
    });
  });
};

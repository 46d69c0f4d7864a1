import type { Multipart, MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { badRequest, unsupportedMediaType } from './errors.js';

/**
 * The multipart limits of a route that takes one file and nothing else (the document upload, the branding logo):
 * busboy stops at a second part, which nothingElse() answers 400 one_file_only (not its own 413).
 */
export const ONE_FILE_LIMITS = { files: 1, fields: 1, parts: 1, fieldNameSize: 100, headerPairs: 20 } as const;

/** busboy's refusal of a part past the limits above: the body held more than the one file. */
const EXTRA_PART = /^FST_(PARTS|FILES|FIELDS)_LIMIT$/;

export interface OneFile {
  /** The part, its bytes not yet read. */
  file: MultipartFile;
  /** Run once the file's bytes are read, before anything is stored: 400 one_file_only when the body goes on. */
  nothingElse: () => Promise<void>;
}

/**
 * The one part named `field` of an upload, a file with its filename (400 file_required, or filename_required otherwise;
 * `what` names the upload in the message). A body that is not multipart (JSON, which the API parses everywhere) is 415,
 * as any other content type a route does not take. `fileSizeBytes` is busboy's cut-off for its bytes.
 */
export async function oneFileUpload(request: FastifyRequest, { field, what, fileSizeBytes }: { field: string; what: string; fileSizeBytes: number }): Promise<OneFile> {
  const required = (other?: string) =>
    badRequest('file_required', `Send the ${what} as the multipart form field "${field}"${other ? `, not "${other}"` : ''}`, `body.${field}`);
  if (!request.isMultipart()) throw unsupportedMediaType('This content type is not accepted here');
  const parts = request.parts({ limits: { fileSize: fileSizeBytes } });
  const { value: part } = (await parts.next()) as IteratorResult<Multipart, undefined>;
  if (part?.type === 'file' && part.fieldname === field && part.filename) {
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
      if (more) throw badRequest('one_file_only', `Send one part, the file "${field}": this body held more`, 'body');
    };
    return { file: part, nothingElse };
  }
  if (part?.type === 'file') part.file.resume(); // read and dropped, so the connection stays usable
  if (part?.fieldname !== field) throw required(part?.fieldname);
  // The part came as a plain field (no filename), or from a form submitted with no file chosen (filename="").
  throw badRequest('filename_required', `The "${field}" part must be a file with its filename`, `body.${field}`);
}

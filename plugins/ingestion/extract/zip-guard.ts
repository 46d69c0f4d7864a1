import yauzl from 'yauzl';
import { DEFAULT_ZIP_LIMITS, ExtractionError, type ZipLimits } from '../extracted-document.js';

const MiB = 1024 * 1024;

const bomb = (detail: string) => new ExtractionError('zip_bomb', `The file was refused as a likely zip bomb: ${detail}`);

/**
 * Refuses an Office file (a zip) before a parser inflates it in memory: too many parts, too large
 * unpacked, or compressed too well. Sizes are then checked against the real inflated bytes, because
 * a zip can lie about them and mammoth/exceljs would trust the lie.
 */
export async function guardZip(filePath: string, label: string, overrides: Partial<ZipLimits> = {}): Promise<void> {
  const limits = { ...DEFAULT_ZIP_LIMITS, ...overrides };
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(filePath, { lazyEntries: true, validateEntrySizes: true, autoClose: false });
  } catch {
    throw new ExtractionError('corrupt', `The file is damaged or is not a valid ${label} document`);
  }
  try {
    if (zip.entryCount > limits.maxEntries) throw bomb(`it holds ${zip.entryCount} parts (at most ${limits.maxEntries})`);
    let declared = 0;
    let compressed = 0;
    for await (const entry of zip.eachEntry()) {
      if (entry.isEncrypted()) throw new ExtractionError('encrypted', `The ${label} document is password-protected`);
      declared += entry.uncompressedSize;
      compressed += entry.compressedSize;
      checkSizes(entry.uncompressedSize, entry.compressedSize, declared, limits);
      if (entry.fileName.endsWith('/')) continue;
      await drain(zip, entry);
    }
    if (declared > MiB && declared / Math.max(1, compressed) > limits.maxRatio) throw bomb(`it unpacks over ${limits.maxRatio} times its size`);
  } catch (error) {
    if (error instanceof ExtractionError) throw error;
    throw new ExtractionError('corrupt', `The file is damaged or is not a valid ${label} document`);
  } finally {
    zip.close();
  }
}

function checkSizes(size: number, compressedSize: number, total: number, limits: ZipLimits): void {
  if (total > limits.maxTotalBytes) throw bomb(`it unpacks to more than ${Math.round(limits.maxTotalBytes / MiB)} MB`);
  if (size > MiB && size / Math.max(1, compressedSize) > limits.maxRatio) throw bomb(`a part unpacks over ${limits.maxRatio} times its size`);
}

/** Inflates one entry into nothing: yauzl fails it when the real size differs from the declared one. */
async function drain(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<void> {
  const stream = await zip.openReadStreamPromise(entry);
  try {
    for await (const _ of stream) void _;
  } catch (error) {
    if (error instanceof Error && /too many bytes|too few bytes/.test(error.message)) throw bomb('a part is larger than the zip declares');
    throw error;
  }
}

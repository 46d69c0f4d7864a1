import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { isAbort, messageOf } from '../api/errors';
import { Alert } from '../components/Alert';
import { Dialog } from '../components/Dialog';
import { Highlighted } from './Highlighted';
import { fetchDocumentFile, saveBlob } from './api';
import { locateChunk } from './locate';
import type { PdfDocument } from './pdf';
import './sources.css';

/** What a viewer needs of a cited chunk or a search result. */
export interface SourceRef {
  document_id: string;
  filename: string;
  page?: number;
  heading?: string;
  text: string;
}

/** Text files are shown whole up to this size; beyond it, the part around the chunk. */
const TEXT_LIMIT = 1_000_000;
const TEXT_CONTEXT = 20_000;

function PdfView({ blob, page: firstPage, filename }: { blob: Blob; page: number; filename: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const frame = useRef<HTMLDivElement>(null);
  const [pdf, setPdf] = useState<PdfDocument | null>(null);
  const [page, setPage] = useState(firstPage);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let document: PdfDocument | undefined;
    (async () => {
      const { openPdf } = await import('./pdf');
      document = await openPdf(await blob.arrayBuffer());
      setPage((wanted) => Math.min(Math.max(1, wanted), document!.numPages));
      setPdf(document);
    })().catch(() => setError('This PDF could not be shown. Download it to open it in another program.'));
    return () => void document?.destroy();
  }, [blob]);

  useEffect(() => {
    if (!pdf || !canvas.current || !frame.current) return;
    const width = Math.min(frame.current.clientWidth || 800, 900);
    import('./pdf')
      .then(({ renderPage }) => renderPage(pdf, page, canvas.current!, width))
      .catch(() => setError('This page could not be drawn.'));
  }, [pdf, page]);

  if (error) return <Alert kind="error">{error}</Alert>;
  return (
    <div class="pdf-view" ref={frame}>
      <div class="pdf-toolbar">
        <button type="button" class="button-secondary button-small" disabled={!pdf || page <= 1} onClick={() => setPage(page - 1)}>
          Previous page
        </button>
        <span aria-live="polite">{pdf ? `Page ${page} of ${pdf.numPages}` : 'Opening the PDF…'}</span>
        <button type="button" class="button-secondary button-small" disabled={!pdf || page >= pdf.numPages} onClick={() => setPage(page + 1)}>
          Next page
        </button>
      </div>
      <canvas ref={canvas} class="pdf-page" role="img" aria-label={`Page ${page} of ${filename}`} />
    </div>
  );
}

function TextView({ blob, chunk }: { blob: Blob; chunk: string }) {
  const [text, setText] = useState<string | null>(null);
  const mark = useRef<HTMLElement>(null);
  useEffect(() => {
    blob.text().then(setText, () => setText(''));
  }, [blob]);
  useLayoutEffect(() => {
    mark.current?.scrollIntoView({ block: 'center' });
  }, [text]);
  if (text === null) return <p class="loading">Opening the file…</p>;
  let shown = text;
  let span = locateChunk(text, chunk);
  if (text.length > TEXT_LIMIT && span) {
    const start = Math.max(0, span[0] - TEXT_CONTEXT);
    shown = text.slice(start, span[1] + TEXT_CONTEXT);
    span = [span[0] - start, span[1] - start];
  } else if (text.length > TEXT_LIMIT) shown = text.slice(0, TEXT_LIMIT);
  return (
    <div class="text-view" tabIndex={0} aria-label="Document text">
      {!span && <p class="muted">The cited passage could not be found word for word in this file.</p>}
      <pre>
        <Highlighted text={shown} span={span} markRef={mark} />
      </pre>
    </div>
  );
}

/** The document of a source, opened at the cited place: a PDF at its page, a text file scrolled to the chunk. */
export function SourceViewer({ source, onClose }: { source: SourceRef; onClose: () => void }) {
  const [file, setFile] = useState<{ type: string; blob: Blob } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    fetchDocumentFile(source.document_id, controller.signal).then(setFile, (caught) => isAbort(caught) || setError(messageOf(caught)));
    return () => controller.abort();
  }, [source.document_id]);

  const place = [source.page ? `page ${source.page}` : null, source.heading ?? null].filter(Boolean).join(' · ');
  const isText = file && /^text\/(plain|markdown|csv)$/.test(file.type);
  return (
    <Dialog title={source.filename} onClose={onClose} wide>
      <div class="viewer-meta">
        {place && <p class="muted">{place}</p>}
        {file && (
          <button type="button" class="button-secondary button-small" onClick={() => saveBlob(file.blob, source.filename)}>
            Download the original
          </button>
        )}
      </div>
      {error && <Alert kind="error">{error}</Alert>}
      {!file && !error && <p class="loading">Opening the document…</p>}
      {file?.type === 'application/pdf' && <PdfView blob={file.blob} page={source.page ?? 1} filename={source.filename} />}
      {isText && <TextView blob={file.blob} chunk={source.text} />}
      {file && file.type !== 'application/pdf' && !isText && <p>This type of document is not shown in the browser; download it, or read the cited passage below.</p>}
      {file && !isText && (
        <section class="viewer-chunk" aria-label="The cited passage">
          <h3>Cited passage</h3>
          <p class="untrusted">{source.text}</p>
        </section>
      )}
    </Dialog>
  );
}

import { getDocument, GlobalWorkerOptions, type PDFDocumentProxy } from 'pdfjs-dist';
import workerUrl from 'pdfjs-dist/build/pdf.worker.min.mjs?url';

/** pdf.js from the same build, loaded only when a PDF is opened; its worker is a file of this origin. */
GlobalWorkerOptions.workerSrc = workerUrl;

export type PdfDocument = PDFDocumentProxy;

export function openPdf(data: ArrayBuffer): Promise<PdfDocument> {
  // No eval (the CSP forbids it) and nothing fetched: fonts not embedded fall back to the system's.
  return getDocument({ data, isEvalSupported: false, useSystemFonts: true, enableXfa: false }).promise;
}

/** Draws one page to fit `cssWidth` pixels, sharp on high-density screens. */
export async function renderPage(pdf: PdfDocument, pageNumber: number, canvas: HTMLCanvasElement, cssWidth: number): Promise<void> {
  const page = await pdf.getPage(pageNumber);
  const unscaled = page.getViewport({ scale: 1 });
  const scale = cssWidth / unscaled.width;
  const ratio = window.devicePixelRatio || 1;
  const viewport = page.getViewport({ scale: scale * ratio });
  canvas.width = Math.floor(viewport.width);
  canvas.height = Math.floor(viewport.height);
  canvas.style.width = `${Math.floor(unscaled.width * scale)}px`;
  canvas.style.height = `${Math.floor(unscaled.height * scale)}px`;
  await page.render({ canvas, canvasContext: canvas.getContext('2d')!, viewport }).promise;
}

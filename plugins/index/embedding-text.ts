/**
 * What the embedder sees of a chunk: its heading (the document's title and heading path) above its text,
 * so that a passage is found by what it is about as well as by its own words. Citations quote `text` alone.
 */
export function embeddingText(chunk: { heading?: string | null; text: string }): string {
  return chunk.heading ? `${chunk.heading}\n\n${chunk.text}` : chunk.text;
}

/**
 * Citation markers: the prompt numbers the sources [1]..[n] and the answer keeps the markers that
 * point at one; any other marker is removed, with the space before it. Streamed text is held back
 * while a marker may still be open ("[12" at the end of a piece) and at trailing whitespace.
 */
const MARKER = /(\s*)\[(\s*\d[\d\s,]*)\]/g;
/** An unclosed "[1, 2, 3" longer than this is plain text, not a marker in the making. */
const MAX_OPEN_MARKER = 32;

export function keepValidMarkers(text: string, sourceCount: number): string {
  return text.replace(MARKER, (whole, space: string, inner: string) => {
    const numbers = inner.split(/[\s,]+/).filter(Boolean).map(Number);
    const valid = numbers.filter((n) => Number.isInteger(n) && n >= 1 && n <= sourceCount);
    if (valid.length === numbers.length) return whole;
    return valid.length ? `${space}[${valid.join(', ')}]` : '';
  });
}

/** Markers of past answers point at their own sources, not this prompt's: they are taken out of the history. */
export function stripMarkers(text: string): string {
  return text.replace(MARKER, '');
}

/** keepValidMarkers over a stream of pieces: push each piece, emit what it returns, then flush. */
export class MarkerFilter {
  private held = '';

  constructor(private readonly sourceCount: number) {}

  push(piece: string): string {
    const text = this.held + piece;
    const cut = safeEnd(text);
    this.held = text.slice(cut);
    return keepValidMarkers(text.slice(0, cut), this.sourceCount);
  }

  flush(): string {
    const rest = this.held;
    this.held = '';
    return keepValidMarkers(rest, this.sourceCount);
  }
}

/** Where the text stops being final: before an open marker (and the space before it), or before trailing whitespace. */
function safeEnd(text: string): number {
  let end = text.length;
  const open = text.lastIndexOf('[');
  if (open >= 0 && text.length - open <= MAX_OPEN_MARKER && /^\[[\d\s,]*$/.test(text.slice(open))) end = open;
  while (end > 0 && /\s/.test(text[end - 1])) end--;
  return end;
}

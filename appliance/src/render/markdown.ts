import DOMPurify from 'dompurify';
import { Marked } from 'marked';

/**
 * The one sanitising renderer: every untrusted text shown as markdown (model answers) goes through it.
 * Raw HTML in the text is shown as text, never parsed; marked's output then passes DOMPurify with a short
 * allow-list (no images, media, frames, forms, SVG or styles: nothing that fetches or runs) and links limited
 * to http(s) and mailto. The result is a DOM fragment, never an HTML string handed to innerHTML.
 */

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
  },
});

const ALLOWED_TAGS = ['p', 'br', 'strong', 'em', 'del', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'a', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'hr'];

const purifier = DOMPurify(window);
purifier.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('rel', 'noopener noreferrer nofollow');
    node.setAttribute('target', '_blank');
  }
});

const CITATION = /\[(\d{1,3})\]/g;

/** Turns [n] in text nodes (outside code and links) into links to source n; `citation` builds each link. */
function linkCitations(root: Node, citation: (n: number) => HTMLElement | null): void {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes: Text[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!(node.parentElement?.closest('code, pre, a') ?? false) && CITATION.test((node as Text).data)) nodes.push(node as Text);
    CITATION.lastIndex = 0;
  }
  for (const node of nodes) {
    const parts: Node[] = [];
    let last = 0;
    for (const match of node.data.matchAll(CITATION)) {
      const link = citation(Number(match[1]));
      if (!link) continue;
      parts.push(document.createTextNode(node.data.slice(last, match.index)), link);
      last = match.index! + match[0].length;
    }
    if (!parts.length) continue;
    parts.push(document.createTextNode(node.data.slice(last)));
    node.replaceWith(...parts);
  }
}

export interface RenderOptions {
  /** A link element for citation n, or null when n points at no source (the text stays as it is). */
  citation?: (n: number) => HTMLElement | null;
}

export function renderMarkdown(text: string, { citation }: RenderOptions = {}): DocumentFragment {
  const html = marked.parse(text) as string;
  const fragment = purifier.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: ['href', 'title'],
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
    RETURN_DOM_FRAGMENT: true,
  });
  if (citation) linkCitations(fragment, citation);
  return fragment;
}

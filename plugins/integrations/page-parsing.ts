import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { XMLParser } from 'fast-xml-parser';
import { convert, type FormatCallback } from 'html-to-text';
import { MAX_RESPONSE_BYTES } from './fetcher.js';

/** Reading what a crawled site serves: links of an HTML page, locations of a sitemap, a page's file name. */

/** The page's <a href> targets, resolved against its <base href> (or its own URL); other tags are ignored. */
export function linksOf(html: string, pageUrl: URL): URL[] {
  const hrefs: string[] = [];
  let base = pageUrl;
  const collect: FormatCallback = (elem) => {
    const href = elem.attribs?.href?.trim();
    if (!href) return;
    if (elem.name === 'base') {
      try {
        base = new URL(href, pageUrl);
      } catch {
        // A malformed <base> leaves links relative to the page itself.
      }
    } else hrefs.push(href);
  };
  // html-to-text parses like a browser (scripts and comments are not markup); only these elements are visited.
  convert(html, {
    baseElements: { selectors: ['base', 'a'], orderBy: 'occurrence', returnDomByDefault: false },
    selectors: [{ selector: 'a', format: 'collect' }, { selector: 'base', format: 'collect' }],
    formatters: { collect },
  });
  const links: URL[] = [];
  for (const href of hrefs) {
    try {
      const url = new URL(href, base);
      url.hash = '';
      if (url.protocol === 'http:' || url.protocol === 'https:') links.push(url);
    } catch {
      // Not a URL at all: nothing to follow.
    }
  }
  return links;
}

const xml = new XMLParser({ ignoreAttributes: true, removeNSPrefix: true, processEntities: false, parseTagValue: false });
const asArray = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
const locOf = (entry: unknown): string | null => {
  const loc = (entry as { loc?: unknown } | null)?.loc;
  return typeof loc === 'string' && loc.trim() ? loc.trim() : null;
};

/** A sitemap (urlset) or a sitemap index; gzip-compressed sitemaps are inflated within the size cap. */
export function parseSitemap(body: Buffer): { pages: string[]; sitemaps: string[] } {
  let doc: { urlset?: { url?: unknown }; sitemapindex?: { sitemap?: unknown } };
  try {
    const bytes = body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body, { maxOutputLength: MAX_RESPONSE_BYTES }) : body;
    doc = xml.parse(bytes.toString('utf8')) as typeof doc;
  } catch {
    // Not XML, a broken gzip stream, or one that inflates past the cap: no pages from it.
    return { pages: [], sitemaps: [] };
  }
  return {
    pages: asArray(doc.urlset?.url).map(locOf).filter((loc): loc is string => loc !== null),
    sitemaps: asArray(doc.sitemapindex?.sitemap).map(locOf).filter((loc): loc is string => loc !== null),
  };
}

export function isHtml(contentType: string | undefined, head: Buffer): boolean {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'text/html' || type === 'application/xhtml+xml') return true;
  if (type) return false;
  const start = head.subarray(0, 512).toString('utf8').trimStart().toLowerCase();
  return start.startsWith('<!doctype html') || start.startsWith('<html');
}

const EXTENSION_FOR_TYPE: Record<string, string> = {
  'text/html': '.html',
  'application/xhtml+xml': '.html',
  'application/pdf': '.pdf',
  'text/plain': '.txt',
  'text/markdown': '.md',
  'text/csv': '.csv',
};

/** A file name for the page: its last path segment, with the extension its content type implies. */
export function filenameOf(url: URL, contentType: string | undefined): string {
  let name: string;
  try {
    name = decodeURIComponent(path.posix.basename(url.pathname));
  } catch {
    name = path.posix.basename(url.pathname);
  }
  // A directory URL ("/", "/docs/") is its index page.
  name = name || 'index';
  const expected = EXTENSION_FOR_TYPE[(contentType ?? '').split(';')[0].trim().toLowerCase()];
  const extension = path.posix.extname(name).toLowerCase();
  if (!expected || extension === expected || (expected === '.html' && extension === '.htm') || (expected === '.txt' && extension === '.md')) return name;
  return `${name}${expected}`;
}

import { open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import robotsModule from 'robots-parser';
import { VERSION } from '../../core/version.js';
import { FetchError, type FetchResult, guardedFetch } from './fetcher.js';
import { filenameOf, isHtml, linksOf, parseSitemap } from './page-parsing.js';
import { type Network, type NetworkPolicy, UrlNotAllowed, UrlUnresolvable } from '../../core/net/ssrf-guard.js';

// CommonJS (module.exports = function) behind types that declare an ES default export.
const robotsParser = robotsModule as unknown as (typeof robotsModule)['default'];

const DEFAULT_USER_AGENT = `HearthBot/${VERSION}`;
const ACCEPT = 'text/html, application/xhtml+xml, application/pdf, text/plain, text/markdown, */*;q=0.1';
const ROBOTS_MAX_BYTES = 512 * 1024;

export interface WebConfig {
  start_url?: string;
  sitemap_url?: string;
  max_depth: number;
  max_pages: number;
  allow_private_network: boolean;
  user_agent?: string;
}

export type Credentials = { username: string; password: string } | { bearer_token: string };

/** What the last sync kept of a page: validators for a conditional request, and a stored copy to read links from on 304. */
export interface PreviousPage {
  etag: string | null;
  lastModified: string | null;
  storedCopy: string | null;
}

export type CrawlEvent =
  | { kind: 'fetched'; url: string; filename: string; file: string; etag: string | null; lastModified: string | null }
  | { kind: 'not_modified'; url: string }
  /** Could not be read this time (network error, 5xx): what was indexed stays. */
  | { kind: 'unreachable'; url: string; reason: string }
  /** Not part of the site any more, or never fetchable (404/410, robots, too large, refused): not indexed. */
  | { kind: 'skipped'; url: string; reason: string; tooLarge?: true };

/** The sync cannot go on (robots.txt or the start page unreadable): nothing is removed. */
export class CrawlFailure extends Error {}

interface CrawlerOptions {
  config: WebConfig;
  credentials: Credentials | null;
  previous: (url: string) => PreviousPage | undefined;
  /** An empty folder for response bodies; the consumer removes each fetched file. */
  tmpDir: string;
  signal?: AbortSignal;
  network?: Network;
  onProgress?: (fetched: number, known: number, url: string) => Promise<void>;
}

function authorization(credentials: Credentials): string {
  if ('bearer_token' in credentials) return `Bearer ${credentials.bearer_token}`;
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
}

const withoutHash = (url: URL): string => {
  const copy = new URL(url);
  copy.hash = '';
  return copy.href;
};

/**
 * Breadth-first crawl of one origin: robots.txt first, then the start URL and the sitemap's pages
 * as depth 0, following <a href> links on the same origin to max_depth, at most max_pages requests.
 */
export class WebCrawler {
  private readonly origin: string;
  private readonly policy: NetworkPolicy;
  private readonly userAgent: string;
  private readonly queue: { url: string; depth: number }[] = [];
  private readonly queued = new Set<string>();
  private robots: ReturnType<typeof robotsParser> | null = null;
  private files = 0;

  constructor(private readonly options: CrawlerOptions) {
    const { start_url, sitemap_url } = options.config;
    this.origin = new URL((start_url ?? sitemap_url)!).origin;
    this.policy = { allowPrivateNetwork: options.config.allow_private_network };
    this.userAgent = options.config.user_agent ?? DEFAULT_USER_AGENT;
  }

  async *crawl(): AsyncGenerator<CrawlEvent> {
    await this.readRobots();
    if (this.options.config.start_url) this.enqueue(new URL(this.options.config.start_url), 0);
    await this.seedFromSitemap();
    let fetched = 0;
    while (this.queue.length > 0 && fetched < this.options.config.max_pages) {
      const { url, depth } = this.queue.shift()!;
      if (!this.allowedByRobots(url)) {
        yield { kind: 'skipped', url, reason: 'disallowed by robots.txt' };
        continue;
      }
      fetched++;
      await this.options.onProgress?.(fetched, fetched + this.queue.length, url);
      yield await this.visit(url, depth, fetched === 1 && url === this.startUrl());
    }
  }

  private startUrl(): string | undefined {
    const start = this.options.config.start_url;
    return start ? withoutHash(new URL(start)) : undefined;
  }

  private enqueue(url: URL, depth: number): void {
    const href = withoutHash(url);
    if (url.origin !== this.origin || this.queued.has(href)) return;
    this.queued.add(href);
    this.queue.push({ url: href, depth });
  }

  private allowedByRobots(url: string): boolean {
    return this.robots?.isAllowed(url, this.userAgent) !== false;
  }

  private nextFile(): string {
    return path.join(this.options.tmpDir, String(++this.files));
  }

  private fetch(url: URL, extra: { conditional?: Record<string, string>; maxBytes?: number } = {}): Promise<FetchResult> {
    const { credentials } = this.options;
    return guardedFetch(url, {
      policy: this.policy,
      headers: { 'user-agent': this.userAgent, accept: ACCEPT, 'accept-encoding': 'identity' },
      credentials: credentials ? { origin: this.origin, headers: { authorization: authorization(credentials) } } : undefined,
      saveTo: this.nextFile(),
      sameOriginOnly: true,
      signal: this.options.signal,
      network: this.options.network,
      ...extra,
    });
  }

  /** Fetches a small text resource of the site (robots.txt, a sitemap); null on 4xx. */
  private async fetchResource(url: URL, maxBytes?: number): Promise<Buffer | null> {
    const result = await this.fetch(url, { maxBytes });
    if (result.kind === 'ok') {
      const body = await readFile(result.file);
      await rm(result.file, { force: true });
      return body;
    }
    // Missing, or moved off the site (not followed there): read as absent.
    if (result.kind === 'off_origin' || (result.kind === 'status' && result.status >= 400 && result.status < 500)) return null;
    throw new FetchError(result.kind === 'status' ? `HTTP ${result.status}` : result.kind === 'too_large' ? 'too large' : 'unexpected answer');
  }

  /** Missing (4xx) means everything is allowed; unreadable (5xx, network) stops the sync, as RFC 9309 asks. */
  private async readRobots(): Promise<void> {
    const robotsUrl = new URL('/robots.txt', this.origin);
    let body: Buffer | null;
    try {
      body = await this.fetchResource(robotsUrl, ROBOTS_MAX_BYTES);
    } catch (error) {
      throw new CrawlFailure(`robots.txt of ${this.origin} could not be read (${reasonOf(error)}); nothing was changed`);
    }
    if (body) this.robots = robotsParser(robotsUrl.href, body.toString('utf8'));
  }

  /** The configured sitemap's pages (a sitemap index is followed one level) join the start URL at depth 0. */
  private async seedFromSitemap(): Promise<void> {
    const configured = this.options.config.sitemap_url;
    if (!configured) return;
    const { pages, sitemaps } = await this.readSitemap(configured);
    for (const nested of sitemaps) pages.push(...(await this.readSitemap(nested)).pages);
    for (const page of pages) {
      try {
        this.enqueue(new URL(page), 0);
      } catch {
        // A malformed <loc> is ignored.
      }
    }
  }

  private async readSitemap(location: string): Promise<{ pages: string[]; sitemaps: string[] }> {
    const isConfigured = location === this.options.config.sitemap_url;
    let url: URL;
    try {
      url = new URL(location);
    } catch {
      return { pages: [], sitemaps: [] };
    }
    if (url.origin !== this.origin) return { pages: [], sitemaps: [] };
    let body: Buffer | null = null;
    let reason = 'not found';
    try {
      body = await this.fetchResource(url);
    } catch (error) {
      reason = reasonOf(error);
    }
    if (body) return parseSitemap(body);
    // Without a start URL the sitemap is the only seed: failing to read it must not empty the index.
    if (isConfigured && !this.options.config.start_url) throw new CrawlFailure(`the sitemap could not be read (${reason}); nothing was changed`);
    return { pages: [], sitemaps: [] };
  }

  private async visit(url: string, depth: number, isStart: boolean): Promise<CrawlEvent> {
    const previous = this.options.previous(url);
    const conditional: Record<string, string> = {};
    if (previous?.storedCopy && previous.etag) conditional['if-none-match'] = previous.etag;
    if (previous?.storedCopy && previous.lastModified) conditional['if-modified-since'] = previous.lastModified;
    let result: FetchResult;
    try {
      result = await this.fetch(new URL(url), { conditional });
    } catch (error) {
      this.options.signal?.throwIfAborted();
      if (isStart) throw new CrawlFailure(`the start URL could not be read (${reasonOf(error)}); nothing was changed`);
      const refused = error instanceof UrlNotAllowed;
      return { kind: refused ? 'skipped' : 'unreachable', url, reason: reasonOf(error) };
    }
    if (isStart && result.kind === 'status') throw new CrawlFailure(`the start URL answered HTTP ${result.status}; nothing was changed`);
    const final = withoutHash(result.url);
    if (final === url) return this.settle(url, result, depth, previous);
    const refusal = this.redirectRefusal(result, final, isStart);
    if (refusal) {
      if (result.kind === 'ok') await rm(result.file, { force: true });
      return { kind: 'skipped', url, reason: refusal };
    }
    // A redirect inside the site is indexed under its target's URL, once.
    this.queued.add(final);
    const waiting = this.queue.findIndex((item) => item.url === final);
    if (waiting >= 0) this.queue.splice(waiting, 1);
    return this.settle(final, result, depth, this.options.previous(final));
  }

  /** Why a redirect's target is not crawled in place of the URL asked for, or null when it is. */
  private redirectRefusal(result: FetchResult, final: string, isStart: boolean): string | null {
    if (result.kind === 'off_origin') {
      if (isStart) throw new CrawlFailure(`the start URL redirects to ${result.url.origin}; use that address as start_url`);
      return `redirects off the site, to ${result.url.origin}`;
    }
    if (!this.allowedByRobots(final)) return 'redirects to a page disallowed by robots.txt';
    const waiting = this.queue.some((item) => item.url === final);
    if (this.queued.has(final) && !waiting) return `redirects to ${final}, crawled on its own`;
    return null;
  }

  private async settle(url: string, result: FetchResult, depth: number, previous: PreviousPage | undefined): Promise<CrawlEvent> {
    switch (result.kind) {
      case 'not_modified':
        if (previous?.storedCopy) await this.follow(url, depth, previous.storedCopy, undefined);
        return { kind: 'not_modified', url };
      case 'off_origin':
        return { kind: 'skipped', url, reason: 'redirects off the site' };
      case 'too_large':
        return { kind: 'skipped', url, reason: 'larger than the 20 MB response cap', tooLarge: true };
      case 'status':
        if (result.status === 404 || result.status === 410) return { kind: 'skipped', url, reason: `HTTP ${result.status}` };
        return { kind: 'unreachable', url, reason: `HTTP ${result.status}` };
      case 'ok': {
        const contentType = result.headers['content-type'];
        await this.follow(url, depth, result.file, contentType);
        const header = (name: string) => (typeof result.headers[name] === 'string' ? (result.headers[name] as string) : null);
        return { kind: 'fetched', url, filename: filenameOf(result.url, contentType), file: result.file, etag: header('etag'), lastModified: header('last-modified') };
      }
    }
  }

  /** Queues the same-origin links of an HTML page one level deeper, within max_depth. */
  private async follow(url: string, depth: number, file: string, contentType: string | undefined): Promise<void> {
    if (depth >= this.options.config.max_depth) return;
    const head = Buffer.alloc(512);
    const handle = await open(file, 'r').catch(() => null);
    if (!handle) return;
    try {
      await handle.read(head, 0, head.length, 0);
    } finally {
      await handle.close();
    }
    // A stored copy has no content type: it is recognised by its first bytes.
    if (!isHtml(contentType, head)) return;
    for (const link of linksOf(await readFile(file, 'utf8'), new URL(url))) this.enqueue(link, depth + 1);
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof UrlNotAllowed) return `not allowed: ${error.message}`;
  if (error instanceof UrlUnresolvable || error instanceof FetchError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The browser side of the admin journey: Debian's chromium driven by playwright-core against the real built
 * service (node dist/server.js) on a loopback port. Each page gets a CSP-violation recorder and the page's own
 * errors; axe-core is run in the page through the DevTools protocol (an injected <script> would be refused by
 * the CSP, which is the point); screenshots go to test/e2e/artifacts/admin (gitignored).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { ensureBuilt, listening, ROOT, type Service, startService, tempDir } from '../fixtures/service-process.js';

export const ARTIFACTS = path.join(ROOT, 'test', 'e2e', 'artifacts', 'admin');
const AXE_SOURCE = readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 860 };

export interface Harness {
  baseUrl: string;
  service: Service;
  dataDir: string;
  browser: Browser;
  close: () => Promise<void>;
}

/** The built service with a fresh data folder, and one headless chromium with its background traffic off. */
export async function startHarness(env: Record<string, string>): Promise<Harness> {
  ensureBuilt();
  const dataDir = tempDir('hearth-e2e-admin-');
  const service = startService({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'INFO', ...env });
  const baseUrl = await listening(service, 60_000);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-features=Translate,OptimizationHints,MediaRouter'],
  });
  mkdirSync(ARTIFACTS, { recursive: true });
  return { baseUrl, service, dataDir, browser, close: () => browser.close() };
}

export interface WatchedPage {
  page: Page;
  /** CSP violations the page reported (directive and blocked URI). */
  cspViolations: () => Promise<string[]>;
  /** Uncaught errors in the page. */
  errors: string[];
}

/** A fresh browser context (no cookies) and page at `size`, recording CSP violations from the first script on. */
export async function openPage(harness: Harness, size = DESKTOP, colorScheme: 'light' | 'dark' = 'light'): Promise<WatchedPage> {
  const context = await harness.browser.newContext({ baseURL: harness.baseUrl, viewport: size, colorScheme });
  await context.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __cspViolations: string[] }).__cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  return {
    page,
    errors,
    cspViolations: () => page.evaluate(() => (window as unknown as { __cspViolations: string[] }).__cspViolations ?? []),
  };
}

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/** axe-core's serious and critical violations on the page as it stands. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.map((node) => node.target.join(' ')) }));
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

/** A full-page screenshot at the phone width and at the desktop width, named `<name>-<width>.png`; the page keeps the desktop size. */
export async function screenshots(page: Page, name: string): Promise<void> {
  for (const size of [PHONE, DESKTOP]) {
    await page.setViewportSize(size);
    // Let layout settle after the resize (media queries, sticky panels).
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    await page.screenshot({ path: path.join(ARTIFACTS, `${name}-${size.width}.png`), fullPage: true });
  }
}

import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { licenseKey, LICENSE_ENV } from '../fixtures/license.js';
import { OpenAIWireServer } from '../fixtures/openai-wire-server.js';
import { cleanupServices } from '../fixtures/service-process.js';
import { DESKTOP, type GuardedPage, launchBrowser, openPage, PHONE } from './fixtures/browser.js';
import { startUiService, type UiService, uploadFile, waitForIndexing } from './fixtures/service.js';
import { expectClean, go, signIn } from './fixtures/ui.js';

/**
 * Untrusted text in the browser: a payload corpus is put into model output (through the OpenAI-wire test
 * server as INFERENCE_URL), document text, file names, branding fields and OIDC display names, and the page must
 * show it as text: no script runs (no window.__xss, no dialog), the CSP never has to block anything, and
 * nothing is requested off the box. Also: a clean cited answer (the README's screenshot) and the stop button.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

const SUITE = 'xss';
/** Each would set window.__xss, open a dialog, hide or cover the page, or fetch off the box, if it were rendered as markup. */
const PAYLOADS = [
  '<script>window.__xss=true;alert("script")</script>',
  '<img src=x onerror="window.__xss=true;alert(1)">',
  '[click for details](javascript:window.__xss=true)',
  '<a href="javascript:window.__xss=true">anchor</a>',
  '<svg onload="window.__xss=true"><circle r="4"/></svg>',
  '<iframe srcdoc="<script>parent.__xss=true</script>"></iframe>',
  '<style>*{display:none!important} body{background:url(http://127.0.0.2:9/leak)}</style>',
  '<p style="position:fixed;inset:0;background:red">covered</p>',
  '<math><mtext><table><mglyph><style><img src=x onerror=window.__xss=true>',
  '![pixel](http://127.0.0.2:9/pixel.png)',
  '<object data="javascript:window.__xss=true"></object><embed src="javascript:window.__xss=true">',
  '<form action="javascript:window.__xss=true"><button>go</button></form>',
];
const PAYLOAD_TEXT = PAYLOADS.join('\n\n');
/** No slash (a path separator) and no double quote (a browser sends it as %22 in a multipart name). */
const FILENAME_PAYLOADS = ['<img src=x onerror=window.__xss=true>.md', "'><svg onload=window.__xss=true>.txt", '<style>body{display:none}<b onmouseover=alert(1)>bold.md'];
const LANTERN_ANSWER = 'The copper lantern of the north pier was replaced in **March 1987**, after a winter storm cracked its glass [1]. The harbour council paid for it from the maintenance fund [1].';

let ui: UiService;
let wire: OpenAIWireServer;
let browser: Browser;
let editorPassword: string;
let admin: string;
const axeFindings: string[] = [];

beforeAll(async () => {
  wire = await OpenAIWireServer.start();
  ui = await startUiService({ ...LICENSE_ENV, INFERENCE_URL: wire.url });
  admin = await ui.login();
  await ui.call('POST', '/api/license', { token: admin, body: { license_key: licenseKey('ENTERPRISE') } });
  editorPassword = await ui.createUser('eddie', 'editor');
  await uploadFile(ui, admin, 'harbour-log.md', '# Harbour lantern\n\nThe lighthouse keeper replaced the copper lantern of the north pier in March 1987 after a winter storm cracked its glass. The harbour council paid for the new lantern from the maintenance fund.\n');
  await uploadFile(ui, admin, 'zanzibar-payloads.md', `# Zanzibar notes\n\nZanzibar spice trade records follow.\n\n${PAYLOAD_TEXT}\n`);
  for (const [index, name] of FILENAME_PAYLOADS.entries()) await uploadFile(ui, admin, name, `Zanzibar ledger ${index}: cloves, nutmeg and cinnamon shipped from the harbour.`);
  await waitForIndexing(ui, admin);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await wire?.close();
  cleanupServices();
});

/** No element the sanitiser forbids ended up in rendered markdown, and no link points anywhere but http(s)/mailto. */
async function expectInertMarkdown(guarded: GuardedPage): Promise<void> {
  const { page } = guarded;
  expect(await page.locator('.markdown script, .markdown img, .markdown iframe, .markdown svg, .markdown math, .markdown style, .markdown object, .markdown embed, .markdown form, .markdown [style]').count()).toBe(0);
  const hrefs = await page.locator('.markdown a[href]').evaluateAll((links) => links.map((link) => link.getAttribute('href')));
  for (const href of hrefs) expect(href).toMatch(/^(https?:|mailto:|#)/);
}

async function ask(guarded: GuardedPage, question: string): Promise<void> {
  const before = await guarded.page.locator('.turn').count();
  await guarded.page.getByLabel('Ask a question about the documents').fill(question);
  await guarded.page.getByRole('button', { name: 'Send' }).click();
  await guarded.page.locator('.turn:not([aria-busy])').nth(before).waitFor();
}

describe('untrusted text in the browser', () => {
  it('shows a cited answer: the citation opens the sources panel at the cited chunk, its span marked (desktop)', async () => {
    const guarded = await openPage(browser, ui.url, { suite: SUITE, viewport: DESKTOP });
    onTestFailed(() => guarded.shot('failed-cited').then(() => undefined));
    const { page } = guarded;
    await signIn(page, ui.url, 'eddie', editorPassword);
    await page.waitForURL('**/chat');
    wire.script({ pieces: LANTERN_ANSWER.match(/.{1,12}/g)!, delayMs: 5 });
    await ask(guarded, 'When was the copper lantern replaced?');
    const answer = page.locator('.turn .answer').last();
    await answer.getByText('March 1987').waitFor();
    await answer.getByRole('link', { name: 'Source 1' }).first().click();
    const source = page.locator('.source.selected');
    await source.waitFor();
    expect(await source.textContent()).toContain('harbour-log.md');
    expect(await page.evaluate(() => document.activeElement?.classList.contains('source'))).toBe(true);
    expect(await source.locator('mark').textContent()).toContain('winter storm cracked its glass');
    await page.getByText('Timing and token budget').click();
    axeFindings.push(...(await guarded.axe('chat with citations')));
    await guarded.shot('chat-cited-desktop', { fullPage: false });
    await expectClean(guarded);
    await guarded.close();
  });

  it('stops a streaming answer: the stop button aborts the request, and the partial answer is marked as not saved', async () => {
    const guarded = await openPage(browser, ui.url, { suite: SUITE, viewport: PHONE });
    onTestFailed(() => guarded.shot('failed-stop').then(() => undefined));
    const { page } = guarded;
    await signIn(page, ui.url, 'eddie', editorPassword);
    await page.waitForURL('**/chat');
    wire.script({ pieces: Array.from({ length: 60 }, (_, i) => `word${i} `), delayMs: 150 });
    await page.getByLabel('Ask a question about the documents').fill('Tell me about the harbour lantern at length');
    await page.getByRole('button', { name: 'Send' }).click();
    const streaming = page.locator('.answer.streaming');
    await streaming.getByText('word3', { exact: false }).waitFor();
    const partial = (await streaming.textContent()) ?? '';
    await page.getByText('word6', { exact: false }).waitFor();
    expect(((await streaming.textContent()) ?? '').length, 'the answer grows while it streams').toBeGreaterThan(partial.length);
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByText('Stopped. This answer was not saved.').waitFor();
    expect(await wire.completions.at(-1)!.ended, 'the request to the model was cut').toBe(true);
    expect(await page.locator('.turn .answer').last().textContent()).not.toContain('word59');
    await page.getByRole('button', { name: 'Send' }).waitFor();
    await expectClean(guarded);
    await guarded.close();
  });

  it('renders the payloads in model output, document text, file names and the question as text (desktop)', async () => {
    const guarded = await openPage(browser, ui.url, { suite: SUITE, viewport: DESKTOP });
    onTestFailed(() => guarded.shot('failed-payloads').then(() => undefined));
    const { page } = guarded;
    await signIn(page, ui.url, 'eddie', editorPassword);
    await page.waitForURL('**/chat');
    await page.getByRole('button', { name: 'New chat' }).click();
    // The model's answer carries every payload, split across streamed pieces, citing the payload document.
    wire.script({ pieces: `Zanzibar records [1].\n\n${PAYLOAD_TEXT}`.match(/[\s\S]{1,9}/g)! });
    await ask(guarded, `Zanzibar spice trade ${PAYLOADS[1]}`);
    const answer = page.locator('.turn .answer').last();
    await answer.getByText('<script>window.__xss=true;alert("script")</script>', { exact: false }).waitFor();
    await expectInertMarkdown(guarded);
    await page.getByText(/^Sources \(\d+\)$/).click();
    await page.locator('.source', { hasText: 'zanzibar-payloads.md' }).first().getByText('<iframe srcdoc=', { exact: false }).waitFor();
    await page.locator('.question', { hasText: PAYLOADS[1] }).waitFor();
    await page.getByRole('complementary', { name: 'Conversations' }).getByText(PAYLOADS[1], { exact: false }).waitFor();
    axeFindings.push(...(await guarded.axe('chat with payloads')));
    await guarded.shot('chat-payloads-desktop');

    // The payload document opened in the viewer: its text, as text.
    await page.getByRole('button', { name: /^Open zanzibar-payloads\.md/ }).first().click();
    await page.getByRole('dialog').locator('.text-view').getByText('<svg onload=', { exact: false }).waitFor();
    await guarded.shot('viewer-payloads-desktop', { fullPage: false });
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();

    // File names, in search results and in the library.
    await go(page, 'Search');
    await page.getByLabel('Search the documents').fill('zanzibar ledger');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    for (const name of FILENAME_PAYLOADS) await page.locator('.result .source-file', { hasText: name }).first().waitFor();
    await page.getByRole('button', { name: `Open ${FILENAME_PAYLOADS[0]} at this passage` }).click();
    await page.getByRole('dialog', { name: FILENAME_PAYLOADS[0] }).getByRole('heading', { name: FILENAME_PAYLOADS[0] }).waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await guarded.shot('search-payloads-desktop');
    await go(page, 'Documents');
    for (const name of FILENAME_PAYLOADS) await page.locator('td.doc-name', { hasText: name }).waitFor();
    axeFindings.push(...(await guarded.axe('documents with payload names')));
    await guarded.shot('documents-payloads-desktop');
    await expectClean(guarded);
    await guarded.close();
  });

  it('renders payloads in branding fields and OIDC display names as text, on the sign-in page and in the frame (phone)', async () => {
    await ui.call('PUT', '/api/branding', {
      token: admin,
      body: { app_name: '<img src=x onerror=window.__xss=true>', tagline: '<script>window.__xss=true</script><style>*{display:none}</style>', login_message: PAYLOAD_TEXT.slice(0, 1000) },
    });
    for (const [name, displayName] of [['svg', '<svg onload=window.__xss=true>'], ['img', '<img src=x onerror=alert(1)>']]) {
      await ui.call('POST', '/api/admin/oidc/providers', {
        token: admin,
        expect: 201,
        body: { name, display_name: displayName, client_id: 'hearth', client_secret: 'not-used-here', discovery_url: 'http://127.0.0.1:9/.well-known/openid-configuration', allow_private_network: true, redirect_uri: `${ui.url}/api/auth/oidc/${name}/callback` },
      });
    }
    const guarded = await openPage(browser, ui.url, { suite: SUITE, viewport: PHONE });
    onTestFailed(() => guarded.shot('failed-branding').then(() => undefined));
    const { page } = guarded;
    await page.goto(`${ui.url}/sign-in`);
    await page.locator('.brand-name', { hasText: '<img src=x onerror=window.__xss=true>' }).waitFor();
    await page.locator('.tagline', { hasText: '<script>window.__xss=true</script>' }).waitFor();
    await page.locator('.login-message', { hasText: '<iframe srcdoc=' }).waitFor();
    await page.getByRole('button', { name: 'Sign in with <svg onload=window.__xss=true>' }).waitFor();
    await page.getByRole('button', { name: 'Sign in with <img src=x onerror=alert(1)>' }).waitFor();
    // The CSS payloads changed nothing: the form is there and visible.
    expect(await page.getByLabel('Username').isVisible()).toBe(true);
    axeFindings.push(...(await guarded.axe('sign-in with payloads')));
    await guarded.shot('sign-in-payloads-phone');

    await signIn(page, ui.url, 'eddie', editorPassword);
    await page.waitForURL('**/chat');
    await page.locator('.topbar .brand-name', { hasText: '<img src=x onerror=window.__xss=true>' }).waitFor();
    expect(await page.title()).toContain('<img src=x onerror=window.__xss=true>');
    await guarded.shot('frame-payloads-phone', { fullPage: false });
    await expectClean(guarded);
    await guarded.close();
  });

  it('has no serious or critical axe-core violation on the pages it visited', () => {
    expect(axeFindings).toEqual([]);
  });
});

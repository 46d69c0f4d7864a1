import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed, vi } from 'vitest';
import { OpenAIWireServer } from '../fixtures/openai-wire-server.js';
import { cleanupServices } from '../fixtures/service-process.js';
import { DESKTOP, launchBrowser, openPage } from './fixtures/browser.js';
import { startUiService, type UiService, uploadFile, waitForIndexing } from './fixtures/service.js';
import { expectClean, signIn } from './fixtures/ui.js';

/**
 * The chat's quality bar: a 200-turn conversation scrolls without jank, because a streamed token re-renders
 * only the message being written. The 200 turns are stored through POST /api/chat (small talk: answered by
 * rules, no model); the answer then streams from the OpenAI-wire test server (INFERENCE_URL) in many slow pieces
 * while a MutationObserver watches every DOM node of the earlier turns.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 });

const TURNS = 200;
const SMALL_TALK = ['hello', 'thanks', 'ok', 'good morning', 'thank you so much', 'got it', 'cheers', 'sounds good'];
const QUESTION = 'When was the copper lantern replaced?';
const PIECES = Array.from({ length: 40 }, (_, i) => `piece${i} `);

let ui: UiService;
let wire: OpenAIWireServer;
let browser: Browser;
let password: string;
let conversationId: string;

beforeAll(async () => {
  wire = await OpenAIWireServer.start();
  ui = await startUiService({ INFERENCE_URL: wire.url, RAG_CONVERSATION_MAX_TURNS: String(TURNS + 10) });
  const admin = await ui.login();
  await uploadFile(ui, admin, 'harbour-log.md', '# Harbour lantern\n\nThe lighthouse keeper replaced the copper lantern of the north pier in March 1987 after a winter storm cracked its glass.\n');
  await waitForIndexing(ui, admin);
  password = await ui.createUser('lena', 'viewer');
  const token = await ui.login('lena', password);
  for (let turn = 0; turn < TURNS; turn++) {
    const body = { query: SMALL_TALK[turn % SMALL_TALK.length], ...(conversationId ? { conversation_id: conversationId } : {}) };
    conversationId = (await ui.call<{ conversation_id: string }>('POST', '/api/chat', { token, body })).conversation_id;
  }
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await wire?.close();
  cleanupServices();
});

describe('a long conversation', () => {
  it('holds all 200 turns, and a streaming answer mutates no DOM node of the earlier turns', async () => {
    const guarded = await openPage(browser, ui.url, { suite: 'long-conversation', viewport: DESKTOP });
    onTestFailed(() => guarded.shot('failed-long').then(() => undefined));
    const { page } = guarded;
    await signIn(page, ui.url, 'lena', password);
    await page.waitForURL('**/chat');
    await page.goto(`${ui.url}/chat/${conversationId}`);
    await page.locator('.thread > .turn').nth(TURNS - 1).waitFor();
    expect(await page.locator('.thread > .turn').count()).toBe(TURNS);

    // Every node of the 200 turns is remembered; any change to one of them (or their removal or move) is recorded.
    await page.evaluate(() => {
      const thread = document.querySelector('.thread')!;
      const earlier = new Set<Node>([...thread.querySelectorAll('.turn')]);
      const inEarlier = (node: Node) => [...earlier].some((turn) => turn.contains(node));
      const record = { earlier: [] as string[], streaming: 0 };
      (window as unknown as { __mutations: typeof record }).__mutations = record;
      new MutationObserver((mutations) => {
        for (const mutation of mutations) {
          const moved = [...mutation.addedNodes, ...mutation.removedNodes].some((node) => earlier.has(node));
          if (moved || inEarlier(mutation.target)) record.earlier.push(`${mutation.type} on ${(mutation.target as Element).outerHTML?.slice(0, 80) ?? mutation.target.textContent}`);
          else if (mutation.target instanceof Node && (mutation.target.parentElement ?? mutation.target as Element).closest?.('.turn[aria-busy]')) record.streaming++;
        }
      }).observe(thread, { subtree: true, childList: true, characterData: true, attributes: true });
    });

    wire.otherwise = (request) => (request.stream ? { pieces: PIECES, delayMs: 40 } : { pieces: [QUESTION] });
    await page.getByLabel('Ask a question about the documents').fill(QUESTION);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.answer.streaming').getByText('piece5', { exact: false }).waitFor();
    await page.locator('.thread > .turn:not([aria-busy])').nth(TURNS).waitFor();
    expect(await page.locator('.thread > .turn').last().textContent()).toContain('piece39');

    const mutations = (await page.evaluate('window.__mutations')) as { earlier: string[]; streaming: number };
    expect(mutations.streaming, 'the answer being written changed as it streamed').toBeGreaterThan(5);
    expect(mutations.earlier, 'mutations of the 200 earlier turns').toEqual([]);
    expect(await page.locator('.thread > .turn').count()).toBe(TURNS + 1);
    await expectClean(guarded);
    await guarded.close();
  });
});

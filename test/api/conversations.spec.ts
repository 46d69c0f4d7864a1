import { afterEach, describe, expect, it, vi } from 'vitest';
import { SMALL_TALK_ANSWERS } from '../../plugins/chat/classifier.js';
import { startApp, type TestApp } from '../helpers.js';

const DAY = 24 * 60 * 60 * 1000;

let t: TestApp;
afterEach(async () => {
  vi.useRealTimers();
  await t?.close();
});

/** Small talk is answered without documents or a model, and stored like any turn. */
async function ask(token: string, query: string, conversationId?: string): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/api/chat', token, payload: { query, ...(conversationId ? { conversation_id: conversationId } : {}) } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().conversation_id;
}

const get = (token: string, url: string) => t.request({ method: 'GET', url, token });

describe('conversations', () => {
  it('lists and shows only the caller\'s own conversations, admins included, newest activity first, paginated', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    t = await startApp();
    const alice = (await t.userWithRole('viewer')).access;
    const bob = (await t.userWithRole('viewer')).access;
    const admin = (await t.login()).access;
    const later = () => vi.setSystemTime(Date.now() + 1000);

    const first = await ask(alice, 'hello');
    later();
    await ask(alice, 'thanks', first);
    later();
    const second = await ask(alice, 'good morning');
    const bobs = await ask(bob, 'hi');

    const list = await get(alice, '/api/conversations');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      conversations: [
        { id: second, title: 'good morning', created_at: expect.any(String), updated_at: expect.any(String), turns: 1 },
        { id: first, title: 'hello', created_at: expect.any(String), updated_at: expect.any(String), turns: 2 },
      ],
      total: 2,
    });
    const page = (await get(alice, '/api/conversations?limit=1&offset=1')).json();
    expect(page).toMatchObject({ total: 2, conversations: [{ id: first }] });

    const shown = (await get(alice, `/api/conversations/${first}`)).json();
    expect(shown).toEqual({
      id: first,
      title: 'hello',
      created_at: expect.any(String),
      updated_at: expect.any(String),
      turns: [
        { query: 'hello', answer: SMALL_TALK_ANSWERS.greeting, sources: [], mode: 'extractive', created_at: expect.any(String) },
        { query: 'thanks', answer: SMALL_TALK_ANSWERS.thanks, sources: [], mode: 'extractive', created_at: expect.any(String) },
      ],
    });

    for (const token of [bob, admin]) {
      const res = await get(token, `/api/conversations/${first}`);
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect((await get(admin, '/api/conversations')).json()).toEqual({ conversations: [], total: 0 });
    expect((await get(bob, '/api/conversations')).json().conversations.map((c: { id: string }) => c.id)).toEqual([bobs]);
    expect((await get(alice, '/api/conversations/unknown')).statusCode).toBe(404);

    expect((await get(alice, '/api/conversations?limit=0')).statusCode).toBe(400);
    expect((await get(alice, '/api/conversations?offset=-1')).statusCode).toBe(400);
    expect((await t.request({ method: 'GET', url: '/api/conversations' })).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: `/api/conversations/${first}` })).statusCode).toBe(401);
  });

  it('titles a conversation with its first question, truncated', async () => {
    t = await startApp();
    const viewer = (await t.userWithRole('viewer')).access;
    const id = await ask(viewer, `What is ${'very '.repeat(30)}long?`);
    const { title } = (await get(viewer, `/api/conversations/${id}`)).json();
    expect(title.length).toBeLessThanOrEqual(80);
    expect(title.endsWith('…')).toBe(true);
    expect(title.startsWith('What is very very')).toBe(true);
  });

  it('keeps at most RAG_CONVERSATION_MAX_TURNS turns, dropping the oldest', async () => {
    t = await startApp({ RAG_CONVERSATION_MAX_TURNS: '2' });
    const viewer = (await t.userWithRole('viewer')).access;
    const id = await ask(viewer, 'hello');
    await ask(viewer, 'thanks', id);
    await ask(viewer, 'bye', id);
    const shown = (await get(viewer, `/api/conversations/${id}`)).json();
    expect(shown.turns.map((turn: { query: string }) => turn.query)).toEqual(['thanks', 'bye']);
    expect(shown.title).toBe('hello');
    expect((await get(viewer, '/api/conversations')).json().conversations[0].turns).toBe(2);
    expect(await t.app.db.selectFrom('conversation_turns').selectAll().execute()).toHaveLength(2);
  });

  it('purges conversations idle for longer than RAG_CONVERSATION_MAX_AGE_DAYS', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    t = await startApp({ RAG_CONVERSATION_MAX_AGE_DAYS: '30' });
    await t.userWithRole('viewer', 'reader');
    // Days pass between the steps: a fresh login each time.
    const viewer = async () => (await t.login('reader', 'reader-password-long')).access;
    const old = await ask(await viewer(), 'hello');
    vi.setSystemTime(Date.now() + 20 * DAY);
    const recent = await ask(await viewer(), 'hi');
    const revived = await ask(await viewer(), 'good morning');
    vi.setSystemTime(Date.now() + 5 * DAY);
    expect(await t.app.conversations.purgeExpired()).toBe(0);

    vi.setSystemTime(Date.now() + 6 * DAY); // old: 31 days idle; recent: 11
    await ask(await viewer(), 'thanks', revived);
    expect(await t.app.conversations.purgeExpired()).toBe(1);
    const token = await viewer();
    expect((await get(token, `/api/conversations/${old}`)).statusCode).toBe(404);
    expect((await get(token, `/api/conversations/${recent}`)).statusCode).toBe(200);
    expect((await t.app.db.selectFrom('conversation_turns').select('conversation_id').execute()).map((row) => row.conversation_id)).not.toContain(old);

    vi.setSystemTime(Date.now() + 25 * DAY); // recent: 36 days idle; revived: 25
    expect(await t.app.conversations.purgeExpired()).toBe(1);
    expect((await get(await viewer(), '/api/conversations')).json().conversations.map((c: { id: string }) => c.id)).toEqual([revived]);
  });

  it('sweeps at boot (then daily) only with RETENTION_SWEEPS_ENABLED', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    t = await startApp({ RETENTION_SWEEPS_ENABLED: 'false' });
    const viewer = (await t.userWithRole('viewer')).access;
    const id = await ask(viewer, 'hello');
    vi.setSystemTime(Date.now() + 91 * DAY);
    t = await t.restart();
    expect((await t.app.db.selectFrom('conversations').select('id').execute()).map((row) => row.id)).toEqual([id]);

    const dataDir = t.dataDir;
    await t.app.close();
    t = await startApp({}, dataDir, true);
    expect(await t.app.db.selectFrom('conversations').select('id').execute()).toEqual([]);
  });
});

/**
 * The whole user journey, run by test/api/airgap.spec.ts inside a network namespace that has only loopback
 * (`unshare -rn`): a clean DATA_DIR, the local GGUF installed with the hearth CLI, the service installing the
 * embedder shipped with Hearth (its default, from the repository's own files), an upload ingested, search, a chat answered by the local model, and a sign-in through a
 * loopback OIDC provider. Prints one JSON line of what it saw; throws (exit 1) at the first step that fails.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD } from '../../core/config.js';
import { generateLicenseKeyPair, issueLicense } from '../../plugins/license/license-key.js';
import { multipartBody } from '../fixtures/multipart.js';
import { STORIES_GGUF } from '../fixtures/models.js';
import { exitWithin, listening, ROOT, startService, waitFor } from '../fixtures/service-process.js';
import { startIdp } from '../oidc-idp.js';

const DAY = 24 * 60 * 60 * 1000;
const work = mkdtempSync(path.join(os.tmpdir(), 'hearth-airgap-'));
const dataDir = path.join(work, 'data');
const modelDir = path.join(work, 'models');
const signer = generateLicenseKeyPair();

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`air-gapped journey: ${what}`);
}

async function json(url: string, init: RequestInit & { token?: string; body?: string } = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const { token, ...rest } = init;
  const res = await fetch(url, { ...rest, redirect: 'manual', headers: { ...(rest.body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}), ...(rest.headers as Record<string, string>) } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

const cookie = (headers: Headers, name: string) => headers.getSetCookie().map((c) => c.split(';')[0]).find((c) => c.startsWith(`${name}=`) && c.length > name.length + 1);

// 1. The chat model, installed with the admin command (no network: a local file).
const installed = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'cli.js'), 'models', 'import-llm', STORIES_GGUF], { env: { ...process.env, MODEL_DIR: modelDir }, encoding: 'utf8' });
check(installed.status === 0, `hearth models import-llm failed: ${installed.stderr}`);

// 2. The service on a clean DATA_DIR; it installs the embedder shipped with Hearth itself (the default, as `npm start` runs it).
const service = startService({
  PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, MODEL_DIR: modelDir, LOG_LEVEL: 'INFO',
  HEARTH_DEFAULT_EMBEDDER: 'shipped', N_CTX: '2048',
  LICENSE_PUBLIC_KEYS: signer.publicKeyBase64,
  NODE_OPTIONS: process.env.NODE_OPTIONS ?? '', HEARTH_CONNECT_LOG: process.env.HEARTH_CONNECT_LOG ?? '',
});
try {
  const url = await listening(service, 120_000);
  const login = await json(`${url}/api/auth/login`, { method: 'POST', body: JSON.stringify({ username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD }) });
  check(login.status === 200, `admin login ${login.status}`);
  const admin = login.body.access_token as string;

  // 3. Ingest, then search by keyword and by vector (the shipped embedder, in force from the start, embeds every chunk).
  const text = 'The lighthouse keeper logs the tide tables every morning.\n\nA quokka appendix describes the keeper\'s island in detail, with its cliffs and coves.\n';
  const { payload, headers } = multipartBody([{ name: 'file', content: Buffer.from(text.repeat(8)), filename: 'lighthouse.txt' }]);
  const upload = await fetch(`${url}/api/docs/upload`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${admin}` }, body: payload });
  check(upload.status === 202, `upload ${upload.status}`);
  const vector = await waitFor('a vector search hit (the document embedded by the shipped embedder)', service, async () => {
    const res = await json(`${url}/api/search`, { method: 'POST', token: admin, body: JSON.stringify({ query: 'quokka island cliffs', mode: 'vector', k: 3 }) });
    return res.status === 200 && res.body.results.length > 0 ? res.body.results : undefined;
  }, 600_000, 500);
  const modelInfo = await json(`${url}/api/model-info`, { token: admin });
  check(/^potion-base-4M-int8@/.test(modelInfo.body?.embedding?.model_id ?? '') && modelInfo.body.default_embedder?.state === 'installed', `the shipped embedder is not in force: ${JSON.stringify(modelInfo.body)}`);
  const keyword = await json(`${url}/api/search`, { method: 'POST', token: admin, body: JSON.stringify({ query: 'quokka', mode: 'keyword', k: 3 }) });
  check(keyword.status === 200 && keyword.body.results.length > 0, 'keyword search found nothing');

  // 4. Chat, answered by the local GGUF.
  const chat = await json(`${url}/api/chat`, { method: 'POST', token: admin, body: JSON.stringify({ query: 'What does the quokka appendix describe?' }) });
  check(chat.status === 200, `chat ${chat.status} ${JSON.stringify(chat.body)}`);
  check(chat.body.mode === 'generative', `chat mode ${chat.body.mode}`);

  // 5. Sign in through the loopback OIDC provider (ENTERPRISE).
  const licence = issueLicense(signer.privateKeyPem, {
    id: randomUUID(), licensee: 'Air Gap Corp', tier: 'ENTERPRISE', limits: { documents: 1000, file_size_bytes: 1 << 30, storage_bytes: 1 << 40 },
    issued_at: new Date(Date.now() - DAY).toISOString(), expires_at: new Date(Date.now() + 365 * DAY).toISOString(),
  });
  check((await json(`${url}/api/license`, { method: 'POST', token: admin, body: JSON.stringify({ license_key: licence }) })).status === 200, 'licence');
  const idp = await startIdp(['corp'], { 'sub-alice': { preferred_username: 'alice', email: 'alice@corp.test', groups: ['staff'] } }, { origin: url });
  try {
    const provider = await json(`${url}/api/admin/oidc/providers`, {
      method: 'POST', token: admin,
      body: JSON.stringify({ name: 'corp', display_name: 'Corp SSO', client_id: idp.clientId, client_secret: idp.clientSecret, discovery_url: idp.discoveryUrl, redirect_uri: `${url}/api/auth/oidc/corp/callback`, scopes: 'openid email profile', admin_groups: [], allow_private_network: true }),
    });
    check(provider.status === 201, `provider ${provider.status} ${JSON.stringify(provider.body)}`);
    const start = await fetch(`${url}/api/auth/oidc/corp/login`, { redirect: 'manual' });
    check(start.status === 302, `oidc login ${start.status}`);
    const state = cookie(start.headers, 'hearth_oidc_state');
    const back = await idp.authorize(start.headers.get('location')!, 'sub-alice');
    const done = await fetch(back, { redirect: 'manual', headers: { cookie: state! } });
    check(done.status === 302, `oidc callback ${done.status} ${await done.clone().text()}`);
    const handoff = cookie(done.headers, 'hearth_oidc_handoff');
    const session = await json(`${url}/api/auth/oidc/session`, { method: 'POST', headers: { cookie: handoff! } });
    check(session.status === 200, `oidc session ${session.status}`);
    const me = await json(`${url}/api/auth/me`, { token: session.body.access_token });

    process.stdout.write(`${JSON.stringify({
      url,
      vector_hits: vector.length,
      keyword_hits: keyword.body.results.length,
      chat_mode: chat.body.mode,
      chat_answer_chars: String(chat.body.answer).length,
      oidc_user: me.body.username,
    })}\n`);
  } finally {
    await idp.close();
  }
} finally {
  service.child.kill('SIGTERM');
  await exitWithin(service, 20_000).catch(() => service.child.kill('SIGKILL'));
  rmSync(work, { recursive: true, force: true });
}

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT, tempDir } from '../fixtures/service-process.js';

/**
 * The proof that Hearth works air-gapped. test/api/airgap-journey.ts runs the whole journey (clean DATA_DIR,
 * shipped embedder installed, ingest, search, chat with the local GGUF, OIDC sign-in) in a network namespace of
 * its own with nothing but loopback (`unshare -rn`: a user namespace makes it possible without root). There,
 * a connection to any other address cannot succeed; to show none is even attempted, every Node process of
 * the journey (driver, service, CLI, worker threads) loads test/fixtures/connect-recorder.mjs, which logs
 * each socket connect and DNS lookup before it happens. The test fails if any names another address.
 */

const canUnshare = spawnSync('unshare', ['-rn', 'true']).status === 0;
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost|\[::1\]):\d+$/;

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.skipIf(!canUnshare)('air-gapped (a network namespace with only loopback)', () => {
  it('runs the whole journey, and nothing tries to reach another address', async () => {
    ensureBuilt();
    const log = path.join(tempDir('hearth-airgap-log-'), 'connects.jsonl');
    const recorder = path.join(ROOT, 'test', 'fixtures', 'connect-recorder.mjs');
    const script = 'ip link set lo up && echo "links: $(ip -o link | cut -d: -f2 | tr -d " " | tr "\\n" ",")" >&2 && echo "routes: $(ip route | wc -l)" >&2 && exec "$@"';
    const result = await run('unshare', ['-rn', 'sh', '-c', script, 'sh', process.execPath, '--import', 'tsx', 'test/api/airgap-journey.ts'], {
      ...process.env,
      NODE_OPTIONS: `--import ${recorder}`,
      HEARTH_CONNECT_LOG: log,
    });
    expect(result.code, `${result.stdout}\n${result.stderr.slice(-6000)}`).toBe(0);

    // The namespace: loopback only, no route at all.
    expect(result.stderr).toMatch(/^links: lo,$/m);
    expect(result.stderr).toMatch(/^routes: 0$/m);

    const journey = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    expect(journey).toMatchObject({ chat_mode: 'generative', oidc_user: 'alice' });
    expect(journey.vector_hits).toBeGreaterThan(0);
    expect(journey.keyword_hits).toBeGreaterThan(0);

    expect(existsSync(log)).toBe(true);
    const attempts = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { pid: number; kind: string; target: string });
    const outside = attempts.filter((a) => (a.kind === 'connect' ? !a.target.startsWith('unix:') && !LOOPBACK.test(a.target) : !['localhost', '127.0.0.1', '::1'].includes(a.target)));
    expect(outside).toEqual([]);
    // The recorder was live in more than the driver: the service's own connects (to the IdP) are in the log.
    const connectingProcesses = new Set(attempts.filter((a) => a.kind === 'connect').map((a) => a.pid));
    expect(connectingProcesses.size).toBeGreaterThanOrEqual(2);
  }, 900_000);
});

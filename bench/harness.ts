/**
 * What the bench sections share: the built service as a child process (start on a free port, wait
 * until it answers, stop), logging in as the default admin, per-process figures from /proc, and the
 * small stat and formatting helpers of their tables.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD } from '../core/config.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** What `npm start` and systemd/hearth.service set for the service: the benches run it as deployed. */
export const DEPLOYED_ENV = { MALLOC_ARENA_MAX: '2' };
/** Node flags of `npm start` and the systemd unit; startService gives them to every child, references included. */
export const DEPLOYED_NODE_ARGS = ['--optimize-for-size'];

/** The secrets every bench service boots with. */
export const BENCH_SECRETS = { JWT_SECRET_KEY: 'bench-secret-that-is-long-enough-for-hs256-signing', MFA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };

// --- the service as a child process ---

export interface Service {
  url: string;
  child: ChildProcess;
  output: () => string;
}

export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export interface StartOptions {
  /** Node flags besides DEPLOYED_NODE_ARGS (CPU profiling). */
  nodeArgs?: string[];
  /** Who it is, in error messages. */
  name?: string;
  /** Polled until it answers. */
  readyPath?: string;
  /** Which answers count as ready (default: any status below 500). */
  ready?: (status: number) => boolean;
  timeoutMs?: number;
  /** SIGKILL the child when it does not get ready in time. */
  killOnTimeout?: boolean;
  /** Called as soon as the child is spawned, before it is ready (to kill it on the way out whatever happens). */
  onSpawn?: (service: Service) => void;
}

/** Spawns `node script` on a free port of 127.0.0.1 and waits until readyPath answers over HTTP. */
export async function startService(script: string, env: Record<string, string>, options: StartOptions = {}): Promise<Service> {
  const { nodeArgs = [], name = 'the service', readyPath = '/api/health', ready = (status: number) => status < 500, timeoutMs = 60_000, killOnTimeout = false, onSpawn } = options;
  const port = await freePort();
  const base: Record<string, string> = {};
  // The soft-matching budgets too, so that a bench can measure the service with them on (e.g. its peak RSS).
  for (const key of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'HEARTH_SQLITE_CACHE_MB', 'SEARCH_SOFT_MATCH_CHUNKS', 'CHAT_SOFT_MATCH_CHUNKS']) if (process.env[key]) base[key] = process.env[key]!;
  const child = spawn(process.execPath, [...DEPLOYED_NODE_ARGS, ...nodeArgs, script], { cwd: ROOT, env: { ...base, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const service: Service = { url: `http://127.0.0.1:${port}`, child, output: () => output };
  onSpawn?.(service);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output}`);
    try {
      if (ready((await fetch(`${service.url}${readyPath}`)).status)) return service;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      if (killOnTimeout) child.kill('SIGKILL');
      throw new Error(`${name} did not answer on ${service.url} within ${timeoutMs / 1000} s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** SIGTERM (a graceful exit also writes the CPU profile), SIGKILL if it lingers past killAfterMs. */
export async function stopService(service: Service, killAfterMs = 20_000): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  const exited = new Promise((resolve) => service.child.once('exit', resolve));
  service.child.kill('SIGTERM');
  const timer = setTimeout(() => service.child.kill('SIGKILL'), killAfterMs);
  await exited;
  clearTimeout(timer);
}

/** Logs in as the default admin; returns the access token. */
export async function login(url: string): Promise<string> {
  const res = await fetch(`${url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: DOCUMENTED_DEFAULT_ADMIN_PASSWORD }),
  });
  if (res.status !== 200) throw new Error(`POST /api/auth/login: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

// --- a process's figures, from /proc (null off Linux) ---

/** User + system CPU time of a process in microseconds. */
export function processCpuMicros(pid: number | undefined): number | null {
  if (pid === undefined || process.platform !== 'linux') return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

/** The numeric fields of /proc/<pid>/status (sizes in kB, counts as they are); null off Linux or once the process is gone. */
export function procStatus(pid: number | undefined): Record<string, number> | null {
  if (pid === undefined) return null;
  try {
    const fields: Record<string, number> = {};
    for (const [, name, value] of readFileSync(`/proc/${pid}/status`, 'utf8').matchAll(/^(\w+):\s+(\d+)/gm)) fields[name] = Number(value);
    return fields;
  } catch {
    return null;
  }
}

/** VmHWM (peak resident set) of a process in MiB. */
export function peakRssMiB(pid: number | undefined): number | null {
  const kb = procStatus(pid)?.VmHWM;
  return kb === undefined ? null : kb / 1024;
}

// --- stats and table formatting ---

export interface Stats {
  p50: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
  n: number;
}

export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  const round = (v: number) => Math.round(v * 100) / 100;
  return {
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    mean: round(sorted.reduce((a, b) => a + b, 0) / (sorted.length || 1)),
    min: round(sorted[0] ?? NaN),
    max: round(sorted.at(-1) ?? NaN),
    n: sorted.length,
  };
}

/** A ratio as a percentage with one decimal: 0.8123 -> "81.2%". */
export const pct = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;
/** A number rounded to `digits` decimals, as a number (console.table prints it without trailing zeros). */
export const num = (value: number, digits = 1) => Number(value.toFixed(digits));

import { accessSync, constants, existsSync, statSync, statfsSync } from 'node:fs';
import path from 'node:path';
import { createServer } from 'node:net';
import { parseArgs } from 'node:util';
import SQLite from 'better-sqlite3';
import { loadConfig, type Config } from '../../core/config.js';
import { readTlsCredentials } from '../../core/tls.js';
import { selfTestGpu } from '../../native/llm/index.js';
import { listInstalledModels, resolveActiveModel, verifyModelFiles } from '../../native/model-files/index.js';
import { checkLicenseKey, parsePublicKey } from '../../plugins/license/index.js';
import { cliSecretDirs } from './credentials.js';
import { EXIT, type Command } from './exit-codes.js';

export const DOCTOR_USAGE = `hearth doctor
    Checks the installation, a line per check: configuration, DATA_DIR permissions, disk space, the database,
    the models and their checksums, the GPU (N_GPU_LAYERS: a self-test in a child process), the port, the TLS files and the licence. Each problem comes with a remedy.
    Read-only: safe while the service runs.
    Exit codes: 0 nothing failed (warnings allowed), 3 at least one check failed, 2 usage.`;

type Status = 'ok' | 'warn' | 'fail';
export interface Check {
  name: string;
  status: Status;
  detail: string;
  remedy?: string;
}

const MIB = 1024 * 1024;
const DISK = { failBelow: 200 * MIB, warnBelow: 2048 * MIB };

function permissions(config: Config): Check {
  const name = 'permissions';
  if (!existsSync(config.dataDir)) return { name, status: 'warn', detail: `DATA_DIR ${config.dataDir} does not exist yet`, remedy: 'start the service once, or create it owner-only (mkdir -m 0700)' };
  const stat = statSync(config.dataDir);
  const mode = stat.mode & 0o777;
  if (process.getuid && stat.uid !== process.getuid()) {
    return { name, status: 'fail', detail: `DATA_DIR ${config.dataDir} belongs to uid ${stat.uid}, this command runs as ${process.getuid()}`, remedy: 'run hearth as the service user (sudo -u hearth hearth doctor), or chown -R the folder to it' };
  }
  try {
    accessSync(config.dataDir, constants.W_OK);
  } catch {
    return { name, status: 'fail', detail: `DATA_DIR ${config.dataDir} is not writable`, remedy: 'chown it to the service user and chmod 0700' };
  }
  if (mode & 0o077) return { name, status: 'warn', detail: `DATA_DIR ${config.dataDir} has mode 0${mode.toString(8)}`, remedy: `chmod 0700 ${config.dataDir} (the service tightens it at start)` };
  return { name, status: 'ok', detail: `DATA_DIR ${config.dataDir} is owner-only (0700)` };
}

function diskSpace(config: Config): Check {
  const where = existsSync(config.dataDir) ? config.dataDir : '/';
  const stat = statfsSync(where);
  const free = stat.bavail * stat.bsize;
  const detail = `${Math.round(free / MIB)} MiB free under ${where}`;
  if (free < DISK.failBelow) return { name: 'disk space', status: 'fail', detail, remedy: 'free space: remove documents, old backups or unused models (hearth models list)' };
  if (free < DISK.warnBelow) return { name: 'disk space', status: 'warn', detail, remedy: 'ingestion and index saves need room: plan for more space' };
  return { name: 'disk space', status: 'ok', detail };
}

function database(config: Config): Check {
  if (!existsSync(config.databaseFile)) return { name: 'database', status: 'warn', detail: `no database at ${config.databaseFile} yet`, remedy: 'start the service once: it creates it' };
  const db = new SQLite(config.databaseFile, { readonly: true, fileMustExist: true, timeout: 5000 });
  try {
    const result = db.pragma('quick_check', { simple: true });
    if (result !== 'ok') return { name: 'database', status: 'fail', detail: `quick_check: ${String(result)}`, remedy: 'stop the service and restore the last backup (hearth restore)' };
    return { name: 'database', status: 'ok', detail: `${config.databaseFile} passes quick_check` };
  } finally {
    db.close();
  }
}

async function models(config: Config): Promise<Check[]> {
  const checks: Check[] = [];
  for (const kind of ['embedding', 'llm'] as const) {
    const name = `${kind} models`;
    const { models: installed, problems } = await listInstalledModels(config.modelDir, kind);
    for (const problem of problems) checks.push({ name, status: 'fail', detail: `${problem.folder}: ${problem.error}`, remedy: 'remove the folder or install the model again (hearth models)' });
    for (const model of installed) {
      try {
        await verifyModelFiles(model);
        checks.push({ name, status: 'ok', detail: `${model.id}: files match their sha256` });
      } catch (error) {
        checks.push({ name, status: 'fail', detail: `${model.id}: ${(error as Error).message}`, remedy: `install ${model.id} again (hearth models)` });
      }
    }
    const active = await resolveActiveModel(config.modelDir, kind).catch((error: Error) => error);
    if (active instanceof Error) checks.push({ name, status: 'fail', detail: active.message, remedy: `hearth models ${kind === 'llm' ? 'use-llm' : 'use'} ID` });
    else if (!active) {
      const remedy = kind === 'llm' ? 'chat answers need a GGUF: hearth models import-llm FILE.gguf' : 'search runs on keywords until one is installed: hearth models install-default (or restart the service with HEARTH_DEFAULT_EMBEDDER=shipped)';
      checks.push({ name, status: 'warn', detail: `no ${kind} model installed in ${config.modelDir}`, remedy });
    }
  }
  return checks;
}

/** Where N_GPU_LAYERS asks for the GPU: the CUDA build's self-test on the active chat model, the one the service runs at start. */
async function gpu(config: Config): Promise<Check> {
  const name = 'gpu';
  const layers = `N_GPU_LAYERS=${config.llm.nGpuLayers}`;
  if (config.llm.nGpuLayers === 0) return { name, status: 'ok', detail: `${layers}: the chat model runs on the CPU` };
  if (config.llm.backend === 'hosted' || config.llm.inferenceUrl) return { name, status: 'ok', detail: `${layers} does not apply: the chat model is served elsewhere` };
  const active = await resolveActiveModel(config.modelDir, 'llm').catch(() => null);
  if (!active) return { name, status: 'ok', detail: `${layers}: no chat model installed to test the GPU with` };
  const result = await selfTestGpu(path.join(active.folder, active.manifest.files.model), 'cuda');
  if (result.ok) return { name, status: 'ok', detail: `${layers}: the CUDA build decoded ${active.id} with a layer on the GPU` };
  return {
    name,
    status: 'warn',
    detail: `${layers}, but the CUDA build failed its self-test (${result.reason}): the chat model runs on the CPU`,
    remedy: 'build the CUDA backend on this box (scripts/build-cuda-backend.sh, docs/appliance.md "The GPU"), or set N_GPU_LAYERS=0',
  };
}

/** Free, or held: by a Hearth (its health answers) or by something else. */
async function port(config: Config): Promise<Check> {
  const free = await new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port: config.port, host: config.host }, () => server.close(() => resolve(true)));
  });
  if (free) return { name: 'port', status: 'ok', detail: `${config.host}:${config.port} is free for the service` };
  const health = await fetch(`http://127.0.0.1:${config.port}/api/health`, { signal: AbortSignal.timeout(3000) }).then((r) => r.ok, () => false);
  if (health) return { name: 'port', status: 'ok', detail: `${config.host}:${config.port} is served by a running Hearth` };
  return { name: 'port', status: 'fail', detail: `${config.host}:${config.port} is taken by another program`, remedy: 'stop that program or set PORT' };
}

function tls(config: Config): Check {
  if (!config.tls.enabled) return { name: 'tls', status: 'ok', detail: 'TLS_ENABLED is off (plain HTTP, or TLS at a proxy)' };
  try {
    readTlsCredentials(config.tls);
    return { name: 'tls', status: 'ok', detail: `${config.tls.certPath} and ${config.tls.keyPath} read and match` };
  } catch (error) {
    return { name: 'tls', status: 'fail', detail: (error as Error).message, remedy: 'fix TLS_CERT_PATH / TLS_KEY_PATH (readable by the service user), or renew the certificate' };
  }
}

function licence(config: Config): Check {
  const name = 'licence';
  if (!existsSync(config.databaseFile)) return { name, status: 'ok', detail: 'FREE (no database yet)' };
  const db = new SQLite(config.databaseFile, { readonly: true, fileMustExist: true, timeout: 5000 });
  let row: { licence_key: string } | undefined;
  try {
    row = db.prepare('SELECT licence_key FROM licences ORDER BY id DESC LIMIT 1').get() as { licence_key: string } | undefined;
  } finally {
    db.close();
  }
  if (!row) return { name, status: 'ok', detail: 'FREE: no licence applied' };
  let keys;
  try {
    keys = config.licensePublicKeys.map((text) => parsePublicKey(text));
  } catch (error) {
    return { name, status: 'fail', detail: `LICENSE_PUBLIC_KEYS: ${(error as Error).message}`, remedy: 'set LICENSE_PUBLIC_KEYS to the Ed25519 public key you were given' };
  }
  const result = checkLicenseKey(row.licence_key, keys, Date.now());
  if (result.ok) return { name, status: 'ok', detail: `${result.license.tier} for ${result.license.licensee}, until ${result.license.expires_at}` };
  return { name, status: 'warn', detail: `the stored licence is not in force (${result.problem}: ${result.detail}): running as FREE`, remedy: result.problem === 'expired' ? 'apply a renewed licence in the admin UI' : 'check LICENSE_PUBLIC_KEYS' };
}

export async function runChecks(env: NodeJS.ProcessEnv): Promise<Check[]> {
  let config: Config;
  try {
    config = loadConfig(env, { secretDirs: cliSecretDirs(env) });
  } catch (error) {
    return [{ name: 'configuration', status: 'fail', detail: (error as Error).message, remedy: 'fix the variable in /etc/hearth/hearth.env (docs/appliance.md)' }];
  }
  const checks: Check[] = [{ name: 'configuration', status: 'ok', detail: `valid; hardware profile ${config.hardwareProfile.name}` }];
  for (const check of [permissions, diskSpace, database, tls, licence]) {
    try {
      checks.push(check(config));
    } catch (error) {
      checks.push({ name: check.name, status: 'fail', detail: (error as Error).message });
    }
  }
  checks.push(...(await models(config)), await gpu(config), await port(config));
  return checks;
}

export const doctor: Command = async (io) => {
  const { values } = parseArgs({ args: io.argv, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    io.out(DOCTOR_USAGE);
    return EXIT.ok;
  }
  const checks = await runChecks(io.env);
  for (const check of checks) io.out(`${check.status.toUpperCase().padEnd(4)}  ${check.name}: ${check.detail}${check.remedy ? `\n      -> ${check.remedy}` : ''}`);
  return checks.some((check) => check.status === 'fail') ? EXIT.checksFailed : EXIT.ok;
};

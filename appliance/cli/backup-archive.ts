import { createCipheriv, createDecipheriv, createHash, randomBytes, scryptSync } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { copyFile, link, mkdir, mkdtemp, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import * as tar from 'tar';
import type { Config } from '../../core/config.js';
import { VERSION } from '../../core/version.js';

/**
 * One backup archive (tar + gzip, written by node-tar): the database through SQLite's online backup,
 * the vector index snapshot, the stored documents, the model manifests (weights on request) and, on
 * request, the secrets encrypted under a passphrase. hearth-backup.json lists every file with its
 * sha256, so a damaged or foreign archive is refused before anything is written where it is restored.
 */

export const BACKUP_FORMAT = 'hearth-backup';
const BACKUP_VERSION = 1;
const MANIFEST = 'hearth-backup.json';
const SECRETS = 'secrets.enc';

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: number;
  hearth_version: string;
  created_at: string;
  weights: boolean;
  secrets: boolean;
  /** Archive path -> sha256 (hex) of every file but this manifest. */
  files: Record<string, string>;
}

export interface BackupOptions {
  weights: boolean;
  /** Set: the secrets go in, encrypted with it. */
  passphrase?: string;
}

// --- secrets: scrypt + AES-256-GCM (node:crypto) ---

const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;

export function sealWithPassphrase(plaintext: string, passphrase: string): string {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', scryptSync(passphrase, salt, 32, SCRYPT), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const b64 = (b: Buffer) => b.toString('base64');
  return JSON.stringify({ kdf: 'scrypt', ...SCRYPT, salt: b64(salt), cipher: 'aes-256-gcm', iv: b64(iv), tag: b64(cipher.getAuthTag()), ciphertext: b64(ciphertext) });
}

export function openWithPassphrase(sealed: string, passphrase: string): string {
  const box = JSON.parse(sealed) as Record<string, string>;
  const key = scryptSync(passphrase, Buffer.from(box.salt, 'base64'), 32, SCRYPT);
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(box.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(box.tag, 'base64'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(box.ciphertext, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('the passphrase does not open the archive\'s secrets');
  }
}

// --- writing ---

function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file).on('data', (chunk) => hash.update(chunk)).on('error', reject).on('end', () => resolve(hash.digest('hex')));
  });
}

/** Every regular file under dir, relative paths; a folder that vanishes meanwhile is simply absent. */
function listFiles(dir: string, keep: (relative: string) => boolean = () => true): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  const visit = (relative: string) => {
    for (const entry of readdirSync(path.join(dir, relative), { withFileTypes: true })) {
      const child = path.join(relative, entry.name);
      if (entry.isDirectory()) visit(child);
      else if (entry.isFile() && keep(child)) found.push(child);
    }
  };
  visit('');
  return found;
}

/** A hard link freezes the file as it is now at no cost (documents and weights are never rewritten in place); a copy across filesystems. */
async function snapshotFile(from: string, to: string): Promise<boolean> {
  await mkdir(path.dirname(to), { recursive: true });
  try {
    await link(from, to);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false; // removed while we walked: not part of this backup
    try {
      await copyFile(from, to);
    } catch (copyError) {
      if ((copyError as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw copyError;
    }
  }
  return true;
}

/** SQLite's online backup: a consistent copy while the service reads and writes (its busy_timeout waits out a writer). */
async function backupDatabase(databaseFile: string, to: string): Promise<void> {
  const source = new SQLite(databaseFile, { fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    await source.backup(to);
  } finally {
    source.close();
  }
}

const isModelManifest = (relative: string) => /^[^/]+\/(ACTIVE|[^/]+\/manifest\.json)$/.test(relative);
/**
 * An embedder adapted to the collection (`<model>-corpus-<hash>`, plugins/search-index/corpus-adaptation): made on this
 * box from its documents, so no download brings it back, and small (about 6 MB). Its files always travel.
 */
const isAdaptedModelFile = (relative: string) => /^embeddings\/[^/]+-corpus-[0-9a-f]{8}\//.test(relative);

/** Writes the archive to `file` (through file.partial, renamed at the end: a half-written archive never has the name). */
export async function createBackup(config: Pick<Config, 'dataDir' | 'modelDir' | 'databaseFile' | 'jwtSecretKey' | 'mfaEncryptionKey'>, file: string, options: BackupOptions): Promise<BackupManifest> {
  if (!existsSync(config.databaseFile)) throw new Error(`no database at ${config.databaseFile}: nothing to back up`);
  // Staged inside DATA_DIR: hard links need the same filesystem.
  const staging = await mkdtemp(path.join(config.dataDir, '.backup-'));
  const partial = `${file}.partial`;
  try {
    // The database first: every document it names was stored before its row was committed.
    await mkdir(path.join(staging, 'data'));
    await backupDatabase(config.databaseFile, path.join(staging, 'data', 'hearth.db'));
    const copies: Array<[string, string]> = [
      ...listFiles(path.join(config.dataDir, 'index')).map((f): [string, string] => [path.join(config.dataDir, 'index', f), path.join('data', 'index', f)]),
      ...listFiles(path.join(config.dataDir, 'documents'), (f) => !f.startsWith('.incoming')).map((f): [string, string] => [path.join(config.dataDir, 'documents', f), path.join('data', 'documents', f)]),
      ...listFiles(config.modelDir, (f) => options.weights || isModelManifest(f) || isAdaptedModelFile(f)).map((f): [string, string] => [path.join(config.modelDir, f), path.join('models', f)]),
    ];
    for (const [from, to] of copies) await snapshotFile(from, path.join(staging, to));
    if (options.passphrase !== undefined) {
      const secrets = { jwt_secret_key: config.jwtSecretKey, mfa_encryption_key: config.mfaEncryptionKey.toString('base64') };
      await writeFile(path.join(staging, SECRETS), sealWithPassphrase(JSON.stringify(secrets), options.passphrase));
    }
    const files: Record<string, string> = {};
    for (const relative of listFiles(staging)) files[relative] = await sha256File(path.join(staging, relative));
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      hearth_version: VERSION,
      created_at: new Date().toISOString(),
      weights: options.weights,
      secrets: options.passphrase !== undefined,
      files,
    };
    await writeFile(path.join(staging, MANIFEST), JSON.stringify(manifest, null, 2));
    await tar.c({ file: partial, cwd: staging, gzip: true, portable: true }, [MANIFEST, ...Object.keys(files)]);
    await rename(partial, file);
    return manifest;
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(partial, { force: true });
  }
}

// --- reading back ---

export interface RestoreOptions {
  passphrase?: string;
}

export interface RestoreOutcome {
  manifest: BackupManifest;
  /** Model folders whose weights are not in the archive nor in MODEL_DIR: install them again. */
  modelsWithoutWeights: string[];
  secretsRestored: boolean;
}

function assertManifest(value: unknown): asserts value is BackupManifest {
  const m = value as Partial<BackupManifest> | null;
  if (!m || m.format !== BACKUP_FORMAT || typeof m.files !== 'object' || m.files === null) throw new Error('not a Hearth backup (no hearth-backup.json of the expected format)');
  if (m.version !== BACKUP_VERSION) throw new Error(`backup format version ${String(m.version)} is not supported by this release (${BACKUP_VERSION})`);
}

/** Every file present, none extra, each with its recorded sha256. */
async function verifyFiles(staging: string, manifest: BackupManifest): Promise<void> {
  const present = new Set(listFiles(staging).filter((f) => f !== MANIFEST));
  for (const [relative, sha] of Object.entries(manifest.files)) {
    if (!present.delete(relative)) throw new Error(`damaged archive: ${relative} is missing`);
    if ((await sha256File(path.join(staging, relative))) !== sha) throw new Error(`damaged archive: ${relative} does not match its checksum`);
  }
  if (present.size) throw new Error(`damaged archive: unexpected ${[...present][0]}`);
  if (!manifest.files['data/hearth.db']) throw new Error('damaged archive: no database');
}

function verifyDatabase(file: string): void {
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const check = db.pragma('integrity_check', { simple: true });
    if (check !== 'ok') throw new Error(`the archive's database fails its integrity check: ${String(check)}`);
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'users'").get()) throw new Error('the archive\'s database is not a Hearth database');
  } finally {
    db.close();
  }
}

function isEmptyOrAbsent(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}

/**
 * Restores into an empty (or absent) DATA_DIR. Everything is unpacked and checked in a staging folder
 * beside DATA_DIR first; only a complete, verified archive is moved into place, so a refused one
 * leaves DATA_DIR (and MODEL_DIR) exactly as they were.
 */
export async function restoreBackup(config: Pick<Config, 'dataDir' | 'modelDir'>, file: string, options: RestoreOptions): Promise<RestoreOutcome> {
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  if (!isEmptyOrAbsent(config.dataDir)) throw new Error(`DATA_DIR ${config.dataDir} is not empty: restore only into an empty one (move the current data aside first)`);
  const parent = path.dirname(config.dataDir);
  await mkdir(parent, { recursive: true });
  const staging = await mkdtemp(path.join(parent, `.${path.basename(config.dataDir)}-restore-`));
  const createdDataDir = !existsSync(config.dataDir);
  try {
    try {
      // strict: any header or gzip error fails the whole extraction; node-tar refuses absolute and ../ paths.
      await tar.x({ file, cwd: staging, strict: true, preservePaths: false, filter: (_path, entry) => 'type' in entry && (entry.type === 'File' || entry.type === 'Directory') });
    } catch (error) {
      throw new Error(`not a readable backup archive: ${(error as Error).message}`);
    }
    let manifest: unknown;
    try {
      manifest = JSON.parse(await readFile(path.join(staging, MANIFEST), 'utf8'));
    } catch {
      throw new Error('not a Hearth backup (no hearth-backup.json)');
    }
    assertManifest(manifest);
    await verifyFiles(staging, manifest);
    verifyDatabase(path.join(staging, 'data', 'hearth.db'));
    let secrets: { jwt_secret_key: string; mfa_encryption_key: string } | undefined;
    if (manifest.secrets && options.passphrase !== undefined) {
      secrets = JSON.parse(openWithPassphrase(await readFile(path.join(staging, SECRETS), 'utf8'), options.passphrase));
    }

    // Verified: from here on the archive's files are put in place.
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
    for (const entry of await readdir(path.join(staging, 'data'))) await rename(path.join(staging, 'data', entry), path.join(config.dataDir, entry));
    if (secrets) {
      await mkdir(path.join(config.dataDir, 'secrets'), { mode: 0o700 });
      await writeFile(path.join(config.dataDir, 'secrets', 'jwt_secret_key'), `${secrets.jwt_secret_key}\n`, { mode: 0o600 });
      await writeFile(path.join(config.dataDir, 'secrets', 'mfa_encryption_key'), `${secrets.mfa_encryption_key}\n`, { mode: 0o600 });
    }
    const modelsWithoutWeights = await placeModels(path.join(staging, 'models'), config.modelDir);
    return { manifest, modelsWithoutWeights, secretsRestored: !!secrets };
  } catch (error) {
    if (createdDataDir) await rm(config.dataDir, { recursive: true, force: true });
    throw error;
  } finally {
    // After a failed extraction node-tar may still be closing files: retried, and never in place of the real error.
    await rm(staging, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }).catch(() => undefined);
  }
}

/** Models already in MODEL_DIR are kept as they are (it may be shared); the archive fills in what is absent. */
async function placeModels(from: string, modelDir: string): Promise<string[]> {
  const missingWeights = new Set<string>();
  for (const relative of listFiles(from)) {
    const target = path.join(modelDir, relative);
    if (existsSync(target)) continue;
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    await rename(path.join(from, relative), target);
  }
  // A manifest without its files: the weights were left out of the archive and are not installed here.
  for (const relative of listFiles(modelDir, (f) => f.endsWith('/manifest.json'))) {
    const folder = path.dirname(path.join(modelDir, relative));
    const manifest = JSON.parse(await readFile(path.join(modelDir, relative), 'utf8')) as { sha256?: Record<string, string> };
    for (const name of Object.keys(manifest.sha256 ?? {})) {
      if (!existsSync(path.join(folder, name)) || statSync(path.join(folder, name)).size === 0) missingWeights.add(path.relative(modelDir, folder));
    }
  }
  return [...missingWeights];
}

import { chmodSync, statSync } from 'node:fs';
import { chmod, copyFile } from 'node:fs/promises';
import { ConfigError, type Config } from './config.js';

/**
 * DATA_DIR (database, documents, vector index, secrets) and MODEL_DIR are the service's alone: files
 * 0600, folders 0700, whatever an installer or a volume made of the folders themselves.
 */

/**
 * Every file and folder this process creates from now on is owner-only. A umask rather than a mode on
 * each write: SQLite (the database and its -wal/-shm, which take the database file's mode), the vector
 * index addon, node-llama-cpp and model installs create files whose open() mode is not ours to pass.
 * Process-wide, so call it only from an entry point (server, CLI), never from a worker thread.
 */
export function ownerOnlyNewFiles(): void {
  process.umask(0o077);
}

/** fs.copyFile gives the copy the source's mode whatever the umask: a document or model copied in from a 0644 file is made owner-only. */
export async function copyFileOwnerOnly(from: string, to: string): Promise<void> {
  await copyFile(from, to);
  await chmod(to, 0o600);
}

/**
 * Tightens an existing folder with group/other access to 0700: the log line saying so, or undefined when it
 * was already owner-only or does not exist yet. Throws, with a one-line message, when it cannot be tightened.
 */
export function tightenFolder(dir: string, variable: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(dir).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // created later, owner-only by the umask
    throw new Error(`${dir} cannot be checked (${errorCode(error)})`);
  }
  if ((mode & 0o077) === 0) return undefined;
  try {
    chmodSync(dir, 0o700);
  } catch (error) {
    throw new Error(`${dir} has mode ${octal(mode)} and cannot be tightened to 0700 (${errorCode(error)})`);
  }
  return `${variable} ${dir} was open to group/other (mode ${octal(mode)}): tightened to 0700`;
}

/**
 * DATA_DIR must end owner-only or the service does not start (ConfigError: exit 78); MODEL_DIR holds no user
 * data and may be a shared read-only mount, so a folder that cannot be tightened is only a warning.
 * Returns the log lines.
 */
export function tightenDataFolders(config: Pick<Config, 'dataDir' | 'modelDir'>): string[] {
  const lines: string[] = [];
  try {
    const line = tightenFolder(config.dataDir, 'DATA_DIR');
    if (line) lines.push(line);
  } catch (error) {
    throw new ConfigError('DATA_DIR', `${(error as Error).message}: chown it to the service's user or chmod it 0700`);
  }
  try {
    const line = tightenFolder(config.modelDir, 'MODEL_DIR');
    if (line) lines.push(line);
  } catch (error) {
    lines.push(`MODEL_DIR ${(error as Error).message}; models installed from now on are owner-only`);
  }
  return lines;
}

const octal = (mode: number) => `0${mode.toString(8)}`;
const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code ?? (error as Error).message;

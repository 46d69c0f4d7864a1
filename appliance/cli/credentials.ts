import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../core/config.js';

/**
 * Where the service's secrets live on disk, as the CLI sees them. Under systemd the service reads a
 * copy in $CREDENTIALS_DIRECTORY that systemd takes at start from /etc/hearth/credentials
 * (HEARTH_CREDENTIALS_SOURCE); a quick start keeps generated ones in DATA_DIR/secrets.
 */
export const DEFAULT_CREDENTIALS_SOURCE = '/etc/hearth/credentials';

export function credentialsSource(env: NodeJS.ProcessEnv): string {
  return env.HEARTH_CREDENTIALS_SOURCE?.trim() || DEFAULT_CREDENTIALS_SOURCE;
}

/** The folders loadConfig reads secrets from when a CLI command runs: the service's, then the installed source. */
export function cliSecretDirs(env: NodeJS.ProcessEnv): string[] {
  return [env.CREDENTIALS_DIRECTORY, credentialsSource(env), '/run/secrets'].filter((dir): dir is string => !!dir);
}

/**
 * The file a secret came from and may be rewritten in: the installed source, else the generated one.
 * Throws when the secret is set in the environment (the CLI cannot change that) or exists only as systemd's copy.
 */
export function secretFile(env: NodeJS.ProcessEnv, config: Pick<Config, 'dataDir'>, variable: string, name: string): string {
  if (env[variable]?.trim()) throw new Error(`${variable} is set in the environment: rotate it there (then restart the service)`);
  for (const file of [path.join(credentialsSource(env), name), path.join(config.dataDir, 'secrets', name)]) if (existsSync(file)) return file;
  throw new Error(`no ${name} file found in ${credentialsSource(env)} or ${path.join(config.dataDir, 'secrets')}: set HEARTH_CREDENTIALS_SOURCE to the folder the service's credentials are loaded from`);
}

/** Writes beside the file, then renames: a reader sees the old secret or the new one, never half of one. */
export function stageSecret(file: string, value: string): { commit: () => void; abandon: () => void } {
  const staged = `${file}.new`;
  writeFileSync(staged, `${value}\n`, { mode: 0o600 });
  return { commit: () => renameSync(staged, file), abandon: () => rmSync(staged, { force: true }) };
}

import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../core/config.js';
import { createBackup, restoreBackup } from './backup-archive.js';
import { cliSecretDirs } from './credentials.js';
import { EXIT, UsageError, type Command, type CommandIo } from './exit-codes.js';

export const BACKUP_USAGE = `hearth backup FILE [--with-weights] [--with-secrets --passphrase-stdin]
    Writes one archive (tar.gz) of the service's state, consistent while it runs and ingests: the database
    (SQLite's online backup), the vector index snapshot, the stored documents, the model manifests (the model
    files themselves with --with-weights) and, with --with-secrets, JWT_SECRET_KEY and MFA_ENCRYPTION_KEY
    encrypted with the passphrase read from standard input (scrypt + AES-256-GCM).
    Exit codes: 0 written, 1 failed (no archive left behind), 2 usage, 78 configuration.`;

export const RESTORE_USAGE = `hearth restore FILE [--passphrase-stdin]
    Restores an archive into an empty (or absent) DATA_DIR, with the service stopped. The archive is unpacked
    and checked first (every file's sha256, the database's integrity); a damaged or foreign archive is refused
    with nothing changed. Models already in MODEL_DIR are kept; those whose weights were left out are listed.
    With --passphrase-stdin the archive's secrets are restored into DATA_DIR/secrets.
    Exit codes: 0 restored, 1 refused or failed (nothing changed), 2 usage, 78 configuration.`;

async function passphrase(io: CommandIo, wanted: boolean | undefined): Promise<string | undefined> {
  if (!wanted) return undefined;
  const text = (await io.stdin()).replace(/\r?\n$/, '');
  if (text.length < 8) throw new UsageError('the passphrase (standard input) needs at least 8 characters');
  return text;
}

export const backup: Command = async (io) => {
  const { values, positionals } = parseArgs({
    args: io.argv,
    allowPositionals: true,
    options: { 'with-weights': { type: 'boolean' }, 'with-secrets': { type: 'boolean' }, 'passphrase-stdin': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    io.out(BACKUP_USAGE);
    return EXIT.ok;
  }
  if (!positionals[0]) throw new UsageError('backup needs a FILE');
  if (values['with-secrets'] && !values['passphrase-stdin']) throw new UsageError('--with-secrets needs --passphrase-stdin: secrets are only written encrypted');
  const config = loadConfig(io.env, { secretDirs: cliSecretDirs(io.env) });
  const file = path.resolve(positionals[0]);
  const manifest = await createBackup(config, file, { weights: !!values['with-weights'], passphrase: values['with-secrets'] ? await passphrase(io, true) : undefined });
  io.out(`backup written to ${file}: ${Object.keys(manifest.files).length} files${manifest.weights ? ', model weights included' : ''}${manifest.secrets ? ', secrets encrypted' : ''}`);
  return EXIT.ok;
};

export const restore: Command = async (io) => {
  const { values, positionals } = parseArgs({ args: io.argv, allowPositionals: true, options: { 'passphrase-stdin': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    io.out(RESTORE_USAGE);
    return EXIT.ok;
  }
  if (!positionals[0]) throw new UsageError('restore needs a FILE');
  // Only paths are needed: a restore must not generate secrets into the DATA_DIR it fills.
  const config = loadConfig({ ...io.env, JWT_SECRET_KEY: 'x'.repeat(32), MFA_ENCRYPTION_KEY: '0'.repeat(64) }, { secretDirs: [] });
  const outcome = await restoreBackup(config, path.resolve(positionals[0]), { passphrase: await passphrase(io, values['passphrase-stdin']) });
  io.out(`restored the backup of ${outcome.manifest.created_at} (Hearth ${outcome.manifest.hearth_version}) into ${config.dataDir}`);
  if (outcome.manifest.secrets && !outcome.secretsRestored) io.out('the archive holds encrypted secrets: not restored (no --passphrase-stdin); the service needs the same JWT and MFA keys as before');
  if (outcome.secretsRestored) io.out(`secrets restored into ${path.join(config.dataDir, 'secrets')}`);
  for (const folder of outcome.modelsWithoutWeights) io.out(`model ${folder}: manifest restored, weights missing: install it again (hearth models)`);
  return EXIT.ok;
};

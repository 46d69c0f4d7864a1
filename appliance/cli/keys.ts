import { copyFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../core/config.js';
import { SecretBox } from '../../core/crypto/secret-box.js';
import { openDatabase, type Db } from '../../core/db/database.js';
import { credentialsContext } from '../../plugins/integrations/index.js';
import { totpContext } from '../../plugins/mfa/index.js';
import { secretContext, verifierContext } from '../../plugins/oidc/index.js';
import { cliSecretDirs, secretFile, stageSecret } from './credentials.js';
import { EXIT, UsageError, type Command, type CommandIo } from './exit-codes.js';

export const KEYS_USAGE = `hearth keys: rotate the service's secrets (restart the service afterwards)

  hearth keys rotate-jwt
      A new JWT_SECRET_KEY in the file it is read from. At the next start every token signed with the old
      key is refused: everybody signs in again.
  hearth keys rotate-mfa
      A new MFA_ENCRYPTION_KEY: every TOTP secret, OIDC client secret, pending OIDC login and integration
      credential is re-sealed under it in one database transaction, then the key file is replaced. A value
      that cannot be opened with the current key stops it with nothing changed. The old key is kept beside
      the new one as mfa_encryption_key.previous. Restart the service at once: until then it holds the old key.

Keys are read from and written to HEARTH_CREDENTIALS_SOURCE (default /etc/hearth/credentials, where
install-service puts them), else DATA_DIR/secrets; a key set in the environment must be changed there.
Exit codes: 0 done, 1 failed (nothing changed), 2 usage, 78 configuration.`;

/** Each sealed column, its key column and its context, as the owning plugin seals it. */
const SEALED = [
  { table: 'totp', column: 'secret_sealed', key: 'user_id', context: totpContext },
  { table: 'oidc_providers', column: 'client_secret_sealed', key: 'name', context: secretContext },
  { table: 'oidc_login_states', column: 'code_verifier_sealed', key: 'state_hash', context: verifierContext },
  { table: 'integrations', column: 'credentials_sealed', key: 'id', context: credentialsContext },
] as const;

/** Re-seals every sealed value from one key to the other in one transaction: all of them or none. */
export async function resealAll(db: Db, from: SecretBox, to: SecretBox): Promise<number> {
  return db.transaction().execute(async (trx) => {
    let count = 0;
    for (const { table, column, key, context } of SEALED) {
      // Dynamic table/column names: kysely's types cannot follow them, the table above is the contract.
      const rows = (await trx.selectFrom(table as 'totp').select([`${key} as key` as 'user_id', `${column} as sealed` as 'secret_sealed']).execute()) as unknown as Array<{ key: string; sealed: string | null }>;
      for (const row of rows) {
        if (row.sealed === null) continue;
        let plain: string;
        try {
          plain = from.open(row.sealed, context(row.key));
        } catch {
          throw new Error(`${table}.${column} of ${row.key} cannot be opened with the current key: nothing was changed`);
        }
        await trx.updateTable(table as 'totp').set({ [column]: to.seal(plain, context(row.key)) } as never).where(key as 'user_id', '=', row.key).execute();
        count++;
      }
    }
    return count;
  });
}

async function rotateJwt(io: CommandIo): Promise<number> {
  const config = loadConfig(io.env, { secretDirs: cliSecretDirs(io.env) });
  const file = secretFile(io.env, config, 'JWT_SECRET_KEY', 'jwt_secret_key');
  stageSecret(file, randomBytes(48).toString('base64url')).commit();
  io.out(`new JWT secret written to ${file}: restart the service (every session ends)`);
  return EXIT.ok;
}

async function rotateMfa(io: CommandIo): Promise<number> {
  const config = loadConfig(io.env, { secretDirs: cliSecretDirs(io.env) });
  const file = secretFile(io.env, config, 'MFA_ENCRYPTION_KEY', 'mfa_encryption_key');
  const newKey = randomBytes(32);
  const staged = stageSecret(file, newKey.toString('base64'));
  const db = await openDatabase(config.databaseFile);
  try {
    const count = await resealAll(db, new SecretBox(config.mfaEncryptionKey), new SecretBox(newKey));
    copyFileSync(file, `${file}.previous`);
    staged.commit();
    io.out(`${count} sealed values re-sealed; new key written to ${file} (the old one in ${file}.previous): restart the service now`);
    return EXIT.ok;
  } catch (error) {
    staged.abandon();
    throw error;
  } finally {
    await db.destroy();
  }
}

export const keys: Command = async (io) => {
  const { values, positionals } = parseArgs({ args: io.argv, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    io.out(KEYS_USAGE);
    return EXIT.ok;
  }
  if (positionals[0] === 'rotate-jwt') return rotateJwt(io);
  if (positionals[0] === 'rotate-mfa') return rotateMfa(io);
  throw new UsageError(positionals[0] ? `unknown keys command "${positionals[0]}"` : 'keys needs a command');
};

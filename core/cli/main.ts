#!/usr/bin/env node
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../config.js';
import { ownerOnlyNewFiles } from '../owner-only.js';
import { VERSION } from '../version.js';
import { admin, ADMIN_USAGE } from './admin.js';
import { backup, BACKUP_USAGE, restore, RESTORE_USAGE } from './backup.js';
import { doctor, DOCTOR_USAGE } from './doctor.js';
import { EXIT, UsageError, type Command, type CommandIo } from './exit-codes.js';
import { INSTALL_USAGE, installService, uninstallService } from './install-service.js';
import { keys, KEYS_USAGE } from './keys.js';
import { models } from './models.js';
import { sessions, SESSIONS_USAGE } from './sessions.js';

/** `hearth COMMAND ...`: each command has its own --help; the exit codes are the same for all. */
const COMMANDS: Record<string, { run: Command; usage: string; summary: string }> = {
  admin: { run: admin, usage: ADMIN_USAGE, summary: 'reset-password USER | create-admin: recover admin access' },
  sessions: { run: sessions, usage: SESSIONS_USAGE, summary: 'revoke-all: sign everybody out' },
  models: { run: models, usage: '', summary: 'import | pull | build-default | list | use | import-llm | use-llm' },
  backup: { run: backup, usage: BACKUP_USAGE, summary: 'FILE: one archive of the database, index, documents, model manifests' },
  restore: { run: restore, usage: RESTORE_USAGE, summary: 'FILE: into an empty DATA_DIR, refused whole if damaged' },
  keys: { run: keys, usage: KEYS_USAGE, summary: 'rotate-jwt | rotate-mfa' },
  doctor: { run: doctor, usage: DOCTOR_USAGE, summary: 'check the installation, a line per check with a remedy' },
  'install-service': { run: installService, usage: INSTALL_USAGE, summary: 'systemd unit, user, credentials, profile' },
  'uninstall-service': { run: uninstallService, usage: INSTALL_USAGE, summary: 'remove the unit (data kept unless --purge)' },
};

export const USAGE = `hearth ${VERSION}: the appliance's admin command (run it as the service's user; it reads the service's environment)

${Object.entries(COMMANDS).map(([name, c]) => `  hearth ${name.padEnd(18)} ${c.summary}`).join('\n')}

  hearth COMMAND --help   the command's usage

Every command works while the service runs and while it is stopped (SQLite's locking, a 5 s busy timeout).
Exit codes: 0 done, 1 failed (nothing half-changed), 2 usage, 3 doctor found a failing check, 78 invalid configuration.`;

/** Runs one command line; resolves to the exit code, so tests can drive it in-process too. */
export async function runCli(io: CommandIo): Promise<number> {
  const [name, ...rest] = io.argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(USAGE);
    return name ? EXIT.ok : EXIT.usage;
  }
  if (name === '--version') {
    io.out(VERSION);
    return EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.err(`hearth: unknown command "${name}"\n\n${USAGE}`);
    return EXIT.usage;
  }
  try {
    return await command.run({ ...io, argv: rest });
  } catch (error) {
    if (error instanceof ConfigError) {
      io.err(`hearth: invalid configuration: ${error.message}`);
      return EXIT.config;
    }
    io.err(`hearth ${name}: ${(error as Error).message}`);
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      if (command.usage) io.err(command.usage);
      return EXIT.usage;
    }
    return EXIT.failed;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  ownerOnlyNewFiles(); // what the CLI writes under DATA_DIR and MODEL_DIR is the service's alone, like what it writes itself
  process.exitCode = await runCli({
    argv: process.argv.slice(2),
    out: (line) => console.log(line),
    err: (line) => console.error(line),
    stdin: () => text(process.stdin),
    env: process.env,
  });
}

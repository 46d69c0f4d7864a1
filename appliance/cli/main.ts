#!/usr/bin/env node
import path from 'node:path';
import { text } from 'node:stream/consumers';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../../core/config.js';
import { ownerOnlyNewFiles } from '../../core/owner-only.js';
import { VERSION } from '../../core/version.js';
import { EXIT, UsageError, type Command, type CommandIo } from './exit-codes.js';

interface CommandModule {
  run: Command;
  /** Printed after a usage error (each command prints its own for --help). */
  usage: string;
}

/** Loaded on use: `hearth models list` need not load argon2, node-tar and the OIDC plugin first (seconds on a Jetson). */
const COMMANDS: Record<string, { load: () => Promise<CommandModule>; summary: string }> = {
  admin: { load: async () => { const m = await import('./admin.js'); return { run: m.admin, usage: m.ADMIN_USAGE }; }, summary: 'reset-password USER | create-admin: recover admin access' },
  sessions: { load: async () => { const m = await import('./sessions.js'); return { run: m.sessions, usage: m.SESSIONS_USAGE }; }, summary: 'revoke-all: sign everybody out' },
  models: { load: async () => { const m = await import('./models.js'); return { run: m.models, usage: '' }; }, summary: 'import | pull | install-default | build-default | list | use | import-llm | use-llm' },
  backup: { load: async () => { const m = await import('./backup.js'); return { run: m.backup, usage: m.BACKUP_USAGE }; }, summary: 'FILE: one archive of the database, index, documents, model manifests' },
  restore: { load: async () => { const m = await import('./backup.js'); return { run: m.restore, usage: m.RESTORE_USAGE }; }, summary: 'FILE: into an empty DATA_DIR, refused whole if damaged' },
  keys: { load: async () => { const m = await import('./keys.js'); return { run: m.keys, usage: m.KEYS_USAGE }; }, summary: 'rotate-jwt | rotate-mfa' },
  doctor: { load: async () => { const m = await import('./doctor.js'); return { run: m.doctor, usage: m.DOCTOR_USAGE }; }, summary: 'check the installation, a line per check with a remedy' },
  'install-service': { load: async () => { const m = await import('./install-service.js'); return { run: m.installService, usage: m.INSTALL_USAGE }; }, summary: 'systemd unit, user, credentials, profile' },
  'uninstall-service': { load: async () => { const m = await import('./install-service.js'); return { run: m.uninstallService, usage: m.INSTALL_USAGE }; }, summary: 'remove the unit (data kept unless --purge)' },
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
  if (!Object.hasOwn(COMMANDS, name)) {
    io.err(`hearth: unknown command "${name}"\n\n${USAGE}`);
    return EXIT.usage;
  }
  const command = await COMMANDS[name].load();
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

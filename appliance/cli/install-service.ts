import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chooseProfile, detectDevice, profilesDir } from '../../core/hardware-profile.js';
import { packageFile, packageRoot } from '../../core/package-files.js';
import { DEFAULT_CREDENTIALS_SOURCE } from './credentials.js';
import { EXIT, UsageError, type Command, type CommandIo } from './exit-codes.js';

export const INSTALL_USAGE = `hearth install-service [--root DIR] [--dry-run] [--profile NAME] [--user NAME]
    Installs Hearth as a systemd service (Debian, Ubuntu, Jetson L4T), run as root: the system user, an
    owner-only /var/lib/hearth, JWT_SECRET_KEY and MFA_ENCRYPTION_KEY generated into /etc/hearth/credentials
    (0600, handed to the service by systemd's LoadCredential=), /etc/hearth/hearth.env from the device's
    firmware profile, the hardened unit with the profile's MemoryMax, then systemctl enable --now.
    Existing credentials and hearth.env are kept. The unit runs this installation (${'${prefix}'}/dist/server.js).
    --root DIR writes every file under DIR (a staging tree, or a test); --dry-run prints the system commands
    (useradd, chown, systemctl) instead of running them.
hearth uninstall-service [--root DIR] [--dry-run] [--purge]
    Stops and disables the service and removes its unit. The data (/var/lib/hearth), the credentials and
    hearth.env are kept unless --purge, which also removes the system user.
Exit codes: 0 done, 1 failed, 2 usage.`;

const UNIT = '/etc/systemd/system/hearth.service';
const STATE_DIR = '/var/lib/hearth';
const ENV_FILE = '/etc/hearth/hearth.env';

interface Target {
  root: string;
  dryRun: boolean;
  io: CommandIo;
}

const under = (t: Target, file: string) => path.join(t.root, file);

/** A system command: printed on a dry run, else run (its failure stops the install). */
function run(t: Target, command: string[], allowFailure = false): boolean {
  if (t.dryRun) {
    t.io.out(`would run: ${command.join(' ')}`);
    return true;
  }
  const result = spawnSync(command[0], command.slice(1), { stdio: 'inherit' });
  if (result.status !== 0 && !allowFailure) throw new Error(`${command.join(' ')} failed (${result.status ?? result.error?.message})`);
  return result.status === 0;
}

function writeOnce(t: Target, file: string, content: string, mode: number): void {
  const target = under(t, file);
  if (existsSync(target)) {
    t.io.out(`kept ${file}`);
    return;
  }
  mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  writeFileSync(target, content, { mode });
  chmodSync(target, mode);
  t.io.out(`wrote ${file}`);
}

/** The shipped unit, pointed at this installation and given the profile's memory ceiling. */
export function renderUnit(template: string, options: { prefix: string; node: string; user: string; memoryMax: string | null }): string {
  let unit = template
    .replaceAll('/opt/hearth', options.prefix)
    .replace(/^ExecStart=\/usr\/bin\/node /m, `ExecStart=${options.node} `)
    .replace(/^User=.*$/m, `User=${options.user}`)
    .replace(/^Group=.*$/m, `Group=${options.user}`);
  if (options.memoryMax) unit = unit.replace(/^(TimeoutStopSec=.*)$/m, `$1\n# The firmware profile's ceiling: the kernel reclaims or kills the service before the OS starves.\nMemoryMax=${options.memoryMax}`);
  return unit;
}

function install(t: Target, profileName: string | undefined, user: string): void {
  const profile = chooseProfile(detectDevice(), profileName);
  t.io.out(`hardware profile ${profile.name} (${profile.reason})${profile.memoryMax ? `, MemoryMax=${profile.memoryMax}` : ''}`);
  const userExists = !t.dryRun && spawnSync('id', ['-u', user]).status === 0;
  if (!userExists) run(t, ['useradd', '--system', '--home-dir', STATE_DIR, '--shell', '/usr/sbin/nologin', '--user-group', user]);

  mkdirSync(under(t, STATE_DIR), { recursive: true, mode: 0o700 });
  chmodSync(under(t, STATE_DIR), 0o700);
  const credentials = DEFAULT_CREDENTIALS_SOURCE;
  mkdirSync(under(t, credentials), { recursive: true, mode: 0o700 });
  chmodSync(under(t, credentials), 0o700);
  writeOnce(t, path.join(credentials, 'jwt_secret_key'), `${randomBytes(48).toString('base64url')}\n`, 0o600);
  writeOnce(t, path.join(credentials, 'mfa_encryption_key'), `${randomBytes(32).toString('base64')}\n`, 0o600);
  const preset = profile.name === 'generic' ? '# No firmware profile matched this device: defaults come from its cores.\n' : readFileSync(path.join(profilesDir(), `${profile.name}.env`), 'utf8');
  writeOnce(t, ENV_FILE, `# Hearth's settings (docs/appliance.md). Generated from firmware-profiles/${profile.name}.env; edit freely.\n${preset}`, 0o640);

  const unit = renderUnit(readFileSync(packageFile('systemd', 'hearth.service'), 'utf8'), { prefix: packageRoot(), node: process.execPath, user, memoryMax: profile.memoryMax });
  mkdirSync(path.dirname(under(t, UNIT)), { recursive: true });
  writeFileSync(under(t, UNIT), unit, { mode: 0o644 });
  chmodSync(under(t, UNIT), 0o644);
  t.io.out(`wrote ${UNIT}`);

  run(t, ['chown', '-R', `${user}:${user}`, under(t, STATE_DIR)]);
  run(t, ['systemctl', 'daemon-reload']);
  run(t, ['systemctl', 'enable', '--now', 'hearth']);
  t.io.out('installed: journalctl -u hearth -f shows the start, and the default admin password warning until it is changed');
}

function uninstall(t: Target, purge: boolean, user: string): void {
  run(t, ['systemctl', 'disable', '--now', 'hearth'], true);
  rmSync(under(t, UNIT), { force: true });
  t.io.out(`removed ${UNIT}`);
  run(t, ['systemctl', 'daemon-reload']);
  if (!purge) {
    t.io.out(`kept ${STATE_DIR}, /etc/hearth (data, credentials, settings): --purge removes them`);
    return;
  }
  for (const dir of [STATE_DIR, '/etc/hearth']) {
    rmSync(under(t, dir), { recursive: true, force: true });
    t.io.out(`removed ${dir}`);
  }
  run(t, ['userdel', user], true);
}

function target(io: CommandIo, root: string | undefined, dryRun: boolean | undefined): Target {
  const resolved = path.resolve(root ?? '/');
  if (!dryRun && resolved === '/' && process.getuid?.() !== 0) throw new Error('install-service writes /etc and /var/lib: run it as root (or --dry-run --root DIR)');
  return { root: resolved, dryRun: !!dryRun, io };
}

const OPTIONS = {
  root: { type: 'string' },
  'dry-run': { type: 'boolean' },
  profile: { type: 'string' },
  user: { type: 'string' },
  purge: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const installService: Command = async (io) => {
  const { values, positionals } = parseArgs({ args: io.argv, options: OPTIONS, allowPositionals: true });
  if (values.help) {
    io.out(INSTALL_USAGE);
    return EXIT.ok;
  }
  if (positionals.length) throw new UsageError(`install-service takes no argument ("${positionals[0]}")`);
  install(target(io, values.root, values['dry-run']), values.profile, values.user ?? 'hearth');
  return EXIT.ok;
};

export const uninstallService: Command = async (io) => {
  const { values, positionals } = parseArgs({ args: io.argv, options: OPTIONS, allowPositionals: true });
  if (values.help) {
    io.out(INSTALL_USAGE);
    return EXIT.ok;
  }
  if (positionals.length) throw new UsageError(`uninstall-service takes no argument ("${positionals[0]}")`);
  uninstall(target(io, values.root, values['dry-run']), !!values.purge, values.user ?? 'hearth');
  return EXIT.ok;
};

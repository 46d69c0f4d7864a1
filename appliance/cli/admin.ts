import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { EXIT, UsageError, type Command, type CommandIo } from './exit-codes.js';
import { withServiceState } from './service-state.js';

export const ADMIN_USAGE = `hearth admin: recover access to the service (works while it runs or is stopped)

  hearth admin reset-password USER [--password-stdin]
      Sets a new password for USER and ends all of USER's sessions. Without --password-stdin a random
      password is generated and printed once.
  hearth admin create-admin --username NAME [--email ADDRESS] [--password-stdin]
      Creates another admin (for an admin locked out with no other admin left). The password: as above.

Passwords follow the service's policy: 12 to 256 characters, not the username, not the documented default.
Exit codes: 0 done, 1 failed (unknown user, weak password, taken username), 2 usage, 78 configuration.`;

/** A password an admin can type from a printout: 20 characters of base64url (120 bits). */
const generatedPassword = () => randomBytes(15).toString('base64url');

async function chosenPassword(io: CommandIo, fromStdin: boolean | undefined): Promise<{ password: string; generated: boolean }> {
  if (!fromStdin) return { password: generatedPassword(), generated: true };
  const password = (await io.stdin()).replace(/\r?\n$/, '');
  if (!password) throw new UsageError('--password-stdin: standard input was empty');
  return { password, generated: false };
}

async function resetPassword(io: CommandIo, username: string | undefined, fromStdin: boolean | undefined): Promise<number> {
  if (!username) throw new UsageError('reset-password needs a USER');
  const { password, generated } = await chosenPassword(io, fromStdin);
  return withServiceState(io.env, async ({ users }) => {
    const user = await users.findByUsername(username);
    if (!user) {
      io.err(`hearth: no user "${username}"`);
      return EXIT.failed;
    }
    await users.update(user.id, { password });
    io.out(`password of ${user.username} reset; their sessions have ended`);
    if (generated) io.out(`new password: ${password}`);
    return EXIT.ok;
  });
}

async function createAdmin(io: CommandIo, username: string | undefined, email: string | undefined, fromStdin: boolean | undefined): Promise<number> {
  if (!username) throw new UsageError('create-admin needs --username');
  const { password, generated } = await chosenPassword(io, fromStdin);
  return withServiceState(io.env, async ({ users }) => {
    const user = await users.create({ username, password, role: 'admin', ...(email ? { email } : {}) });
    io.out(`admin ${user.username} created (id ${user.id})`);
    if (generated) io.out(`password: ${password}`);
    return EXIT.ok;
  });
}

export const admin: Command = async (io) => {
  const { values, positionals } = parseArgs({
    args: io.argv,
    allowPositionals: true,
    options: { 'password-stdin': { type: 'boolean' }, username: { type: 'string' }, email: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [sub, user] = positionals;
  if (values.help) {
    io.out(ADMIN_USAGE);
    return EXIT.ok;
  }
  if (sub === 'reset-password') return resetPassword(io, user, values['password-stdin']);
  if (sub === 'create-admin') return createAdmin(io, values.username, values.email, values['password-stdin']);
  throw new UsageError(sub ? `unknown admin command "${sub}"` : 'admin needs a command');
};

import { parseArgs } from 'node:util';
import { EXIT, UsageError, type Command } from './exit-codes.js';
import { withServiceState } from './service-state.js';

export const SESSIONS_USAGE = `hearth sessions: sign everybody out

  hearth sessions revoke-all
      Ends every login session: refresh tokens stop working at once, access tokens within a second
      (a running service re-reads a session at most a second after it last did). Users sign in again.

Exit codes: 0 done, 1 failed, 2 usage, 78 configuration.`;

export const sessions: Command = async (io) => {
  const { values, positionals } = parseArgs({ args: io.argv, allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    io.out(SESSIONS_USAGE);
    return EXIT.ok;
  }
  if (positionals[0] !== 'revoke-all') throw new UsageError(positionals[0] ? `unknown sessions command "${positionals[0]}"` : 'sessions needs a command');
  return withServiceState(io.env, async ({ sessions: service }) => {
    await service.revokeAll();
    io.out('every session revoked: users must sign in again');
    return EXIT.ok;
  });
};

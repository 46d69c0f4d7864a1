/** The `hearth` command's exit codes (docs/appliance.md lists them for admins and scripts). */
export const EXIT = {
  ok: 0,
  /** The command ran and failed; it changed nothing it could not finish. */
  failed: 1,
  /** Bad arguments: the usage was printed. */
  usage: 2,
  /** doctor: at least one check failed (warnings alone exit 0). */
  checksFailed: 3,
  /** The configuration (environment, credentials) is invalid, as for the service (sysexits EX_CONFIG). */
  config: 78,
} as const;

/** A mistake in the command line: exit 2 with the command's usage. */
export class UsageError extends Error {}

/** What every command receives: its arguments and where its lines go (tests capture them). */
export interface CommandIo {
  argv: string[];
  out: (line: string) => void;
  err: (line: string) => void;
  /** Standard input as text, for --password-stdin and passphrases; read only when a command asks. */
  stdin: () => Promise<string>;
  env: NodeJS.ProcessEnv;
}

export type Command = (io: CommandIo) => Promise<number>;

import { createHmac, hkdfSync } from 'node:crypto';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';
import type { LogLevel } from './config.js';
import type { SettingsStore } from './settings/store.js';

const PINO_LEVEL: Record<LogLevel, string> = { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', ERROR: 'error' };

export function pinoLevel(level: LogLevel): string {
  return PINO_LEVEL[level];
}

/** Anything that may carry a secret is censored before a line is written, whoever logs it. */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.new_password',
  '*.current_password',
  '*.access_token',
  '*.refresh_token',
  '*.mfa_token',
  '*.token',
  '*.license_key',
  '*.client_secret',
  '*.secret',
  '*.api_key',
];

export function loggerOptions(level: LogLevel, privacy: LogPrivacy, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level: pinoLevel(level),
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      req: (req: LoggedRequest) => ({
        method: req.method,
        ...privacy.target(req),
        ip: req.ip === undefined ? undefined : privacy.address(req.ip),
      }),
    },
    ...(stream ? { stream } : {}),
  } as FastifyServerOptions['logger'];
}

/** What the `req` serializer reads of a Fastify request (routeOptions.url: the matched pattern, absent without a match). */
interface LoggedRequest {
  method: string;
  url: string;
  ip?: string;
  params?: unknown;
  routeOptions?: { url?: string };
}

/** Looks up the id of the user a username or id names, synchronously; undefined when none does. */
type UserDirectory = (key: string) => string | undefined;

/** One place that decides what a user identifier, a request's target or a query text looks like in a log line. */
export class LogPrivacy {
  private readonly key: Buffer;
  private userIdOf: UserDirectory = () => undefined;

  constructor(secret: string, private readonly settings: SettingsStore) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'hearth', 'log-anonymisation', 32));
  }

  /** Installed by the users plugin, so that a user named by username and by id gets the same anon id. */
  useUserDirectory(directory: UserDirectory): void {
    this.userIdOf = directory;
  }

  /** A user, named by id or username, as it may appear in a log line: anonymised, the anon id of their user id. */
  user(identifier: string): string {
    if (!this.anonymising()) return identifier;
    return this.anonymise(this.userIdOf(identifier) ?? identifier.toLowerCase());
  }

  /** A client address as it may appear in a log line (never looked up as a user: "10.0.0.1" is a valid username). */
  address(ip: string): string {
    return this.anonymising() ? this.anonymise(ip) : ip;
  }

  /** The signed-in caller of a request, as a log identifier. */
  caller(request: { principal: { id: string } | null }): string {
    if (!request.principal) return 'anonymous';
    return this.anonymising() ? this.anonymise(request.principal.id) : request.principal.id;
  }

  /**
   * Where a request went. Never the query string (reset tokens, OIDC codes). Anonymising, not the
   * path either, which can name a user (/api/admin/auth/users/viewer2/sessions): the route pattern,
   * and each path parameter as a user would be (an unmatched path is the parameter '*').
   */
  target(request: LoggedRequest): { url: string; params?: Record<string, string> } {
    if (!this.anonymising()) return { url: request.url.split('?')[0] };
    const params = Object.entries((request.params ?? {}) as Record<string, unknown>).map(([name, value]) => [name, this.user(String(value))]);
    return { url: request.routeOptions?.url ?? '*', ...(params.length ? { params: Object.fromEntries(params) } : {}) };
  }

  private anonymising(): boolean {
    return this.settings.current('RAG_LOG_ANONYMISE');
  }

  private anonymise(value: string): string {
    return `anon:${createHmac('sha256', this.key).update(value).digest('hex').slice(0, 16)}`;
  }

  query(text: string): string {
    return this.settings.current('RAG_LOG_REDACT_QUERIES') ? `[redacted ${text.length} chars]` : text;
  }
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type PinoLogger = FastifyBaseLogger & { isLevelEnabled(level: string): boolean };

/**
 * A request's logger that makes its pino child only when a line at an enabled level is written.
 * With the redaction paths above, pino runs a child's bindings through the redactor, which cost
 * more per request than routing it; above INFO most requests never write a line at all.
 */
class RequestLogger {
  private made?: PinoLogger;

  constructor(
    private readonly parent: PinoLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private real(): PinoLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options) as PinoLogger);
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }

  private write(level: Level, args: unknown[]): void {
    if (this.isLevelEnabled(level)) (this.real()[level] as (...a: unknown[]) => void)(...args);
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}
}

/** Fastify's childLoggerFactory: every request gets a RequestLogger over the app's logger. */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(logger as PinoLogger, bindings, options) as unknown as FastifyBaseLogger;
}

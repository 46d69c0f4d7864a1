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
      // Query strings can carry reset tokens or OIDC codes: only the path is logged.
      req: (req: { method: string; url: string; ip?: string }) => ({
        method: req.method,
        url: req.url.split('?')[0],
        ip: req.ip === undefined ? undefined : privacy.user(req.ip),
      }),
    },
    ...(stream ? { stream } : {}),
  } as FastifyServerOptions['logger'];
}

/** One place that decides what a user identifier or a query text looks like in a log line. */
export class LogPrivacy {
  private readonly key: Buffer;

  constructor(secret: string, private readonly settings: SettingsStore) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'hearth', 'log-anonymisation', 32));
  }

  /** A user id, username or client address as it may appear in a log line. */
  user(identifier: string): string {
    if (!this.settings.seed('RAG_LOG_ANONYMISE')) return identifier;
    return `anon:${createHmac('sha256', this.key).update(identifier).digest('hex').slice(0, 16)}`;
  }

  /** The signed-in caller of a request, as a log identifier. */
  caller(request: { principal: { id: string } | null }): string {
    return request.principal ? this.user(request.principal.id) : 'anonymous';
  }

  query(text: string): string {
    return this.settings.seed('RAG_LOG_REDACT_QUERIES') ? `[redacted ${text.length} chars]` : text;
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

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chooseProfile, detectDevice, inferenceThreads, type DetectedDevice, type HardwareProfile } from './hardware-profile.js';

/**
 * Every environment variable of the spec, parsed and validated once.
 * Hand-written rather than env-schema/Ajv: the spec's booleans are 0/1 as well as true/false,
 * several rules span variables, and secrets also come from files; a small table keeps each
 * variable's default, type and one-line error in one place.
 */

export class ConfigError extends Error {
  constructor(readonly variable: string, detail: string) {
    super(`${variable}: ${detail}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const JWT_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** The documented default admin password: the service warns loudly while it is in use. */
export const DOCUMENTED_DEFAULT_ADMIN_PASSWORD = 'hearth-change-me';
const REQUIRED_CONNECTOR_PATH = '/app/docs';
const MIN_JWT_SECRET_LENGTH = 32;

/**
 * CHAT_SOFT_MATCH_CHUNKS by default: soft term matching in the chat's retrieval, on (session 21 before extractive answers,
 * session 22 before a chat model's too, now that it costs a few ms: docs/retrieval-quality.md).
 */
export const CHAT_SOFT_MATCH_CHUNKS = 1500;

/** Seeded variables: copied into the settings table on first boot, authoritative there afterwards. */
export interface SeedSettings {
  ACCESS_TOKEN_EXPIRE_SECONDS: number;
  REFRESH_TOKEN_EXPIRE_SECONDS: number;
  RAG_LOG_ANONYMISE: boolean;
  RAG_LOG_REDACT_QUERIES: boolean;
  RAG_CONVERSATION_MAX_AGE_DAYS: number;
  RAG_CONVERSATION_MAX_TURNS: number;
  LOG_LEVEL: LogLevel;
  RAG_AUDIT_RETENTION_DAYS: number;
  INFERENCE_TIMEOUT_SECONDS: number;
  RAG_LOG_TOKEN_USAGE: boolean;
  RAG_QUERY_REWRITE_ENABLED: boolean;
  RAG_QUERY_REWRITE_MAX_TURNS: number;
  /** With a chat model: the question searched is widened by a few terms the model suggests (chat/expand.ts). */
  RAG_QUERY_EXPANSION_ENABLED: boolean;
  RAG_MIN_CHUNK_LENGTH: number;
}
export type SeedKey = keyof SeedSettings;

/**
 * SQLite's page cache, MiB (its default is 2). A search at 100k chunks reads the keyword index's pages, the
 * chunk-to-document index and the documents again and again; with 2 MiB most of them were read back through the
 * file and parsed anew each time. 16 MiB took 12-28% off hybrid /api/search at 100k chunks at p50 and 8-24% at p95,
 * with and without an access filter (8 MiB about half of that, 64 MiB no more: docs/performance.md). It fills as pages are
 * read, so it costs its size in RSS on a large index and less on a small one.
 */
export const DEFAULT_SQLITE_CACHE_MIB = 16;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  modelDir: string;
  databaseFile: string;
  /** SQLite's page cache of the service's connection, MiB (HEARTH_SQLITE_CACHE_MB; DEFAULT_SQLITE_CACHE_MIB). */
  sqliteCacheMiB: number;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  vectorDbUrl: string;
  vectorDbApiKey: string | undefined;

  jwtSecretKey: string;
  jwtAlgorithm: JwtAlgorithm;
  /** 32 raw bytes. */
  mfaEncryptionKey: Buffer;
  authRequireEmail: boolean;
  defaultAdmin: { username: string; password: string; email: string | undefined };
  licensePublicKeys: string[];

  tls: {
    enabled: boolean;
    serverName: string | undefined;
    certPath: string;
    keyPath: string;
    hstsMaxAge: number;
    ocspStapling: boolean;
    /** TLS_HTTP_REDIRECT_PORT: plain HTTP there is redirected to HTTPS; unset: no such port. */
    httpRedirectPort: number | undefined;
  };

  connectorAllowedPaths: string[];
  indexExtractionWorkers: number;
  backendWorkers: number;
  dockerPort: number;
  indexing: { ocrEnabled: boolean; ocrLanguages: string[]; tablesEnabled: boolean; upsertBatchSize: number };

  llm: {
    backend: 'local' | 'hosted';
    nCtx: number;
    nThreads: number;
    nGpuLayers: number;
    inferenceUrl: string | undefined;
    hostedApiKey: string | undefined;
    hostedBaseUrl: string | undefined;
    hostedModel: string | undefined;
    classifierLlmEnabled: boolean;
    classifierLlmMaxTokens: number;
  };
  embedDevice: 'auto' | 'cpu' | 'cuda';
  /**
   * HEARTH_DEFAULT_EMBEDDER: with no embedding model installed, install the pretrained embedder shipped with Hearth
   * (shipped, potion-base-4M-int8), build Hearth's own WordNet table in the background (build), or stay on keywords (off).
   */
  defaultEmbedder: 'shipped' | 'build' | 'off';
  /** HEARTH_DEFAULT_EMBEDDER_DIMENSION: vector size of that build (256; smaller only to save build time in tests). */
  defaultEmbedderDimension: number;
  /** MODEL_WATCH_SECONDS: how often MODEL_DIR is checked for a newly activated embedding model (0: only at start). */
  modelWatchSeconds: number;
  /**
   * EMBED_ADAPT (on by default): a static (Model2Vec) embedder in force is adapted to the collection in the background
   * once it holds EMBED_ADAPT_MIN_CHUNKS chunks (2,000), and again when it has grown or shrunk by a quarter, up to
   * EMBED_ADAPT_MAX_CHUNKS (50,000; 0: no limit): past it the model in force stays as it is, since the index's rebuild
   * onto a new model holds two indexes at once (plugins/search-index/corpus-adaptation; docs/models.md).
   */
  embedAdapt: { enabled: boolean; minChunks: number; maxChunks: number };
  /** The optional reranker stage (a cross-encoder in MODEL_DIR/rerankers): RERANK_TOP_N fused candidates at most, within RERANK_BUDGET_MS (0: off). */
  rerank: { topN: number; budgetMs: number };
  /**
   * Soft term matching: the chunks of the first candidate documents it may score per hybrid retrieval, 0: off.
   * SEARCH_SOFT_MATCH_CHUNKS for POST /api/search (0 by default: ~3-8 ms more a search, where the p95 target at 100k
   * chunks is 10 ms); CHAT_SOFT_MATCH_CHUNKS for the chat's retrieval, whether a chat model answers or passages are
   * quoted (1500 by default: its sources hold the answer more often; EXTRACTIVE_SOFT_MATCH_CHUNKS, its name in
   * session 21, is read when it is not set). docs/retrieval-quality.md.
   */
  softMatch: { search: number; chat: number };

  email: {
    provider: 'console' | 'smtp';
    smtpHost: string | undefined;
    smtpPort: number | undefined;
    smtpFrom: string | undefined;
    smtpUsername: string | undefined;
    smtpPassword: string | undefined;
    smtpStartTls: boolean;
    smtpTls: boolean;
  };
  /** Where the web UI lives, for links in mail (PUBLIC_URL); unset: https://SERVER_NAME with TLS, else no origin at all. */
  publicUrl: string | undefined;
  /** Password reset endpoints: RATE_LIMIT_RESET per minute, bursts of RATE_LIMIT_RESET_BURST. */
  rateLimitReset: { perMinute: number; burst: number };

  jobs: {
    storeBackend: 'auto' | 'redis' | 'memory';
    stateTtlSeconds: number;
    historyRetentionDays: number;
    schedulerLeaderLockEnabled: boolean;
    schedulerLeaderLockTtlSeconds: number;
    /** SCHEDULER_TICK_SECONDS: how often the leader looks for due schedules and tasks. */
    schedulerTickSeconds: number;
    retentionSweepsEnabled: boolean;
  };

  enableApiDocs: boolean;
  /** TRUST_PROXY: false, true, or the proxies' addresses/CIDRs: which X-Forwarded-For to believe for client addresses. */
  trustProxy: boolean | string[];
  /**
   * REQUEST_TIMEOUT_SECONDS: the longest a client may take to send a whole request, headers and body (0: no limit). A
   * body trickled byte by byte otherwise holds its connection for ever (Fastify turns Node's own 300 s off).
   */
  requestTimeoutSeconds: number;
  /** Accepted for PostgreSQL deployments; ignored by SQLite. */
  dbPool: { size: number; maxOverflow: number; timeoutSeconds: number; recycleSeconds: number };

  /** OIDC env fallback: used only while the provider table is empty. */
  oidcEnvProviders: OidcEnvProvider[];

  seed: SeedSettings;

  /** The firmware-profiles/ preset chosen for this device, and which of its defaults are in force (explicit variables win). */
  hardwareProfile: HardwareProfile & { device: DetectedDevice; applied: Record<string, string> };

  /** Things worth a log line once the logger exists (generated secrets, ignored variables). */
  notices: string[];
}

export interface OidcEnvProvider {
  name: string;
  clientId: string | undefined;
  clientSecret: string | undefined;
  discoveryUrl: string | undefined;
  redirectUri: string | undefined;
  scopes: string;
  adminGroups: string[];
  /** OIDC_<NAME>_ALLOW_PRIVATE_NETWORK: the IdP may be on loopback or a private network. */
  allowPrivateNetwork: boolean;
}

interface LoadConfigOptions {
  /** Folders holding container secrets; default $CREDENTIALS_DIRECTORY then /run/secrets. */
  secretDirs?: string[];
  /** Cores present, for derived defaults. */
  cores?: number;
  /** Memory present (bytes), for the hardware profile; os.totalmem() by default. */
  memoryBytes?: number;
  /** Where /proc/device-tree/model and /etc/nv_tegra_release are read (HEARTH_SYSTEM_ROOT wins); "/" by default. */
  systemRoot?: string;
}

// --- value parsers: each throws ConfigError naming the variable ---

function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function int(env: Env, name: string, fallback: number, min = -Infinity, max = Infinity): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) throw new ConfigError(name, `must be an integer, got "${value}"`);
  const parsed = Number(value);
  if (parsed < min || parsed > max) {
    throw new ConfigError(name, `must be between ${min} and ${max === Infinity ? 'infinity' : max}, got ${parsed}`);
  }
  return parsed;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['0', 'false', 'no', 'off'].includes(value)) return false;
  throw new ConfigError(name, `must be true/false or 1/0, got "${value}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T, caseInsensitive = false): T {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const match = allowed.find((candidate) => (caseInsensitive ? candidate.toLowerCase() === value.toLowerCase() : candidate === value));
  if (!match) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${value}"`);
  return match;
}

function url(env: Env, name: string, fallback?: string): string | undefined {
  const value = raw(env, name) ?? fallback;
  if (value === undefined) return undefined;
  try {
    new URL(value);
  } catch {
    throw new ConfigError(name, `must be a URL, got "${value}"`);
  }
  return value;
}

function list(value: string | undefined, separator: string): string[] {
  return (value ?? '').split(separator).map((item) => item.trim()).filter(Boolean);
}

// --- secrets: env first, then container secret files, then (quick start only) a generated file ---

function readSecretFile(dirs: string[], name: string): string | undefined {
  for (const dir of dirs) {
    const file = path.join(dir, name);
    if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  }
  return undefined;
}

function generatedSecret(dataDir: string, name: string, make: () => string, notices: string[]): string {
  const dir = path.join(dataDir, 'secrets');
  const file = path.join(dir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const value = make();
  writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  notices.push(`${name.toUpperCase()} was not configured: generated one into ${file} (mode 0600). Set it explicitly for production.`);
  return value;
}

function parseMfaKey(value: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
  const roundTrips = /^[0-9a-fA-F]{64}$/.test(value) || key.toString('base64').replace(/=+$/, '') === value.replace(/=+$/, '');
  if (key.length !== 32 || !roundTrips) {
    throw new ConfigError('MFA_ENCRYPTION_KEY', 'must be 32 bytes, hex (64 characters) or base64 (44 characters) encoded');
  }
  return key;
}

/** Behind the TLS proxy, throttles must key on the real client address, not the proxy's. */
function trustProxy(env: Env): boolean | string[] {
  const value = raw(env, 'TRUST_PROXY');
  if (value === undefined || ['0', 'false', 'no', 'off'].includes(value.toLowerCase())) return false;
  if (['1', 'true', 'yes', 'on'].includes(value.toLowerCase())) return true;
  const entries = list(value, ',');
  for (const entry of entries) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(entry)) throw new ConfigError('TRUST_PROXY', `"${entry}" is not an address or CIDR`);
  }
  return entries;
}

/** Detects the device and picks its preset; `applied` keeps only the defaults no explicit variable overrides. */
function profileFor(env: Env, cores: number, options: LoadConfigOptions): Config['hardwareProfile'] {
  const device = detectDevice({ systemRoot: raw(env, 'HEARTH_SYSTEM_ROOT') ?? options.systemRoot, cores, memoryBytes: options.memoryBytes });
  let profile: HardwareProfile;
  try {
    profile = chooseProfile(device, raw(env, 'HEARTH_HARDWARE_PROFILE'));
  } catch (error) {
    throw new ConfigError('HEARTH_HARDWARE_PROFILE', (error as Error).message);
  }
  const applied = Object.fromEntries(Object.entries(profile.defaults).filter(([name]) => raw(env, name) === undefined)) as Record<string, string>;
  return { ...profile, device, applied };
}

export function loadConfig(env: Env = process.env, options: LoadConfigOptions = {}): Config {
  const notices: string[] = [];
  const cores = options.cores ?? os.availableParallelism();
  const hardwareProfile = profileFor(env, cores, options);
  env = { ...env, ...hardwareProfile.applied }; // the profile's defaults, read below like any variable
  const secretDirs = options.secretDirs ?? [env.CREDENTIALS_DIRECTORY, '/run/secrets'].filter((dir): dir is string => !!dir);
  const secret = (envName: string, fileName: string) => raw(env, envName) ?? readSecretFile(secretDirs, fileName);

  const dataDir = path.resolve(raw(env, 'DATA_DIR') ?? './data');
  const modelDir = path.resolve(raw(env, 'MODEL_DIR') ?? path.join(dataDir, 'models'));

  const databaseUrl = raw(env, 'DATABASE_URL');
  let databaseFile = path.join(dataDir, 'hearth.db');
  if (databaseUrl) {
    if (databaseUrl.startsWith('sqlite:')) databaseFile = path.resolve(databaseUrl.replace(/^sqlite:(\/\/)?/, ''));
    else throw new ConfigError('DATABASE_URL', 'only sqlite: URLs are supported by this release (PostgreSQL is planned)');
  }

  const jwtConfigured = secret('JWT_SECRET_KEY', 'jwt_secret_key');
  if (jwtConfigured !== undefined && jwtConfigured.length < MIN_JWT_SECRET_LENGTH) {
    throw new ConfigError('JWT_SECRET_KEY', `must be at least ${MIN_JWT_SECRET_LENGTH} characters`);
  }
  const mfaConfigured = secret('MFA_ENCRYPTION_KEY', 'mfa_encryption_key');
  const mfaEncryptionKey = parseMfaKey(mfaConfigured ?? '0'.repeat(64)); // validated before any generation happens

  const connectorAllowedPaths = list(raw(env, 'CONNECTOR_ALLOWED_PATHS') ?? REQUIRED_CONNECTOR_PATH, ':').map((p) => p.replace(/\/+$/, ''));
  if (!connectorAllowedPaths.includes(REQUIRED_CONNECTOR_PATH)) {
    throw new ConfigError('CONNECTOR_ALLOWED_PATHS', `must include ${REQUIRED_CONNECTOR_PATH}`);
  }

  const backend = oneOf(env, 'LLM_BACKEND', ['local', 'hosted'] as const, 'local');
  const hostedApiKey = raw(env, 'HOSTED_LLM_API_KEY');
  const hostedModel = raw(env, 'HOSTED_LLM_MODEL');
  if (backend === 'hosted' && !hostedApiKey) throw new ConfigError('HOSTED_LLM_API_KEY', 'is required when LLM_BACKEND is hosted');
  if (backend === 'hosted' && !hostedModel) throw new ConfigError('HOSTED_LLM_MODEL', 'is required when LLM_BACKEND is hosted');

  const emailProvider = oneOf(env, 'EMAIL_PROVIDER', ['console', 'smtp'] as const, 'console');
  const smtpPort = raw(env, 'SMTP_PORT') === undefined ? undefined : int(env, 'SMTP_PORT', 0, 1, 65535);
  if (emailProvider === 'smtp') {
    for (const name of ['SMTP_HOST', 'SMTP_PORT', 'SMTP_FROM']) {
      if (!raw(env, name)) throw new ConfigError(name, 'is required when EMAIL_PROVIDER is smtp');
    }
  }
  // Implicit TLS (port 465) and a STARTTLS upgrade are two ways to the same end; both at once is a mistake.
  if (bool(env, 'SMTP_TLS', false) && bool(env, 'SMTP_STARTTLS', false)) {
    throw new ConfigError('SMTP_STARTTLS', 'cannot be combined with SMTP_TLS (choose implicit TLS or STARTTLS)');
  }
  const publicUrl = url(env, 'PUBLIC_URL');
  if (publicUrl !== undefined && !/^https?:$/.test(new URL(publicUrl).protocol)) throw new ConfigError('PUBLIC_URL', 'must be an http or https URL');

  const tlsEnabled = bool(env, 'TLS_ENABLED', false);
  const serverName = raw(env, 'SERVER_NAME');
  if (tlsEnabled && !serverName) throw new ConfigError('SERVER_NAME', 'must be set when TLS_ENABLED is 1');
  const httpRedirectPort = raw(env, 'TLS_HTTP_REDIRECT_PORT') === undefined ? undefined : int(env, 'TLS_HTTP_REDIRECT_PORT', 0, 0, 65535);
  if (httpRedirectPort !== undefined && !tlsEnabled) throw new ConfigError('TLS_HTTP_REDIRECT_PORT', 'needs TLS_ENABLED=1 (it redirects plain HTTP to HTTPS)');
  // Mailed links are built from configuration only: a request's Host header is the sender's to forge.
  if (emailProvider === 'smtp' && publicUrl === undefined && !tlsEnabled) {
    throw new ConfigError('PUBLIC_URL', 'is required when EMAIL_PROVIDER is smtp (the address of the web UI in password reset links), unless TLS_ENABLED is 1 with SERVER_NAME');
  }

  if (raw(env, 'EFFECTIVE_N_CTX') !== undefined) notices.push('EFFECTIVE_N_CTX is read-only (derived at startup); the configured value is ignored');
  if (raw(env, 'VECTORDB_URL') !== undefined) notices.push('VECTORDB_URL is ignored: this release uses the in-process vector index');

  const oidcEnvProviders = list(raw(env, 'OIDC_PROVIDERS'), ',').map((name): OidcEnvProvider => {
    if (!/^[a-z0-9][a-z0-9_-]{0,62}$/i.test(name)) throw new ConfigError('OIDC_PROVIDERS', `"${name}" is not a valid provider name`);
    const upper = name.toUpperCase().replace(/-/g, '_');
    return {
      name,
      clientId: raw(env, `OIDC_${upper}_CLIENT_ID`),
      clientSecret: readSecretFile(secretDirs, `oidc_${name}_client_secret`),
      discoveryUrl: url(env, `OIDC_${upper}_DISCOVERY_URL`),
      redirectUri: url(env, `OIDC_${upper}_REDIRECT_URI`),
      scopes: raw(env, `OIDC_${upper}_SCOPES`) ?? 'openid email profile',
      adminGroups: list(raw(env, `OIDC_${upper}_ADMIN_GROUPS`), ','),
      allowPrivateNetwork: bool(env, `OIDC_${upper}_ALLOW_PRIVATE_NETWORK`, false),
    };
  });

  const seed: SeedSettings = {
    ACCESS_TOKEN_EXPIRE_SECONDS: int(env, 'ACCESS_TOKEN_EXPIRE_SECONDS', 900, 60, 86_400),
    REFRESH_TOKEN_EXPIRE_SECONDS: int(env, 'REFRESH_TOKEN_EXPIRE_SECONDS', 604_800, 300, 7_776_000),
    RAG_LOG_ANONYMISE: bool(env, 'RAG_LOG_ANONYMISE', true),
    RAG_LOG_REDACT_QUERIES: bool(env, 'RAG_LOG_REDACT_QUERIES', true),
    RAG_CONVERSATION_MAX_AGE_DAYS: int(env, 'RAG_CONVERSATION_MAX_AGE_DAYS', 90, 1),
    RAG_CONVERSATION_MAX_TURNS: int(env, 'RAG_CONVERSATION_MAX_TURNS', 100, 1),
    LOG_LEVEL: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'INFO', true),
    RAG_AUDIT_RETENTION_DAYS: int(env, 'RAG_AUDIT_RETENTION_DAYS', 365, 1),
    INFERENCE_TIMEOUT_SECONDS: int(env, 'INFERENCE_TIMEOUT_SECONDS', 120, 1, 3600),
    RAG_LOG_TOKEN_USAGE: bool(env, 'RAG_LOG_TOKEN_USAGE', false),
    RAG_QUERY_REWRITE_ENABLED: bool(env, 'RAG_QUERY_REWRITE_ENABLED', false),
    RAG_QUERY_REWRITE_MAX_TURNS: int(env, 'RAG_QUERY_REWRITE_MAX_TURNS', 3, 1, 50),
    RAG_QUERY_EXPANSION_ENABLED: bool(env, 'RAG_QUERY_EXPANSION_ENABLED', false),
    RAG_MIN_CHUNK_LENGTH: int(env, 'RAG_MIN_CHUNK_LENGTH', 50, 1, 10_000),
  };
  if (seed.ACCESS_TOKEN_EXPIRE_SECONDS > seed.REFRESH_TOKEN_EXPIRE_SECONDS) {
    throw new ConfigError('ACCESS_TOKEN_EXPIRE_SECONDS', 'must not exceed REFRESH_TOKEN_EXPIRE_SECONDS');
  }

  const config: Config = {
    port: int(env, 'PORT', 8000, 0, 65535),
    host: raw(env, 'HOST') ?? '0.0.0.0',
    dataDir,
    modelDir,
    databaseFile,
    sqliteCacheMiB: int(env, 'HEARTH_SQLITE_CACHE_MB', DEFAULT_SQLITE_CACHE_MIB, 1, 4096),
    databaseUrl,
    redisUrl: url(env, 'REDIS_URL'),
    vectorDbUrl: url(env, 'VECTORDB_URL', 'http://rag-db:6333')!,
    vectorDbApiKey: raw(env, 'VECTORDB_API_KEY'),

    jwtSecretKey: '',
    jwtAlgorithm: oneOf(env, 'JWT_ALGORITHM', JWT_ALGORITHMS, 'HS256'),
    mfaEncryptionKey,
    authRequireEmail: bool(env, 'AUTH_REQUIRE_EMAIL', false),
    defaultAdmin: {
      username: raw(env, 'DEFAULT_ADMIN_USER') ?? 'admin',
      password: env.DEFAULT_ADMIN_PASSWORD || DOCUMENTED_DEFAULT_ADMIN_PASSWORD,
      email: raw(env, 'DEFAULT_ADMIN_EMAIL'),
    },
    licensePublicKeys: list(raw(env, 'LICENSE_PUBLIC_KEYS'), ','),

    tls: {
      enabled: tlsEnabled,
      serverName,
      certPath: raw(env, 'TLS_CERT_PATH') ?? '/etc/nginx/certs/fullchain.pem',
      keyPath: raw(env, 'TLS_KEY_PATH') ?? '/etc/nginx/certs/privkey.pem',
      hstsMaxAge: int(env, 'HSTS_MAX_AGE', 31_536_000, 0),
      ocspStapling: oneOf(env, 'OCSP_STAPLING', ['on', 'off'] as const, 'on', true) === 'on',
      httpRedirectPort,
    },

    connectorAllowedPaths,
    indexExtractionWorkers: int(env, 'INDEX_EXTRACTION_WORKERS', Math.max(1, cores - 1), 1, 64),
    backendWorkers: int(env, 'BACKEND_WORKERS', 1, 1, 64),
    dockerPort: int(env, 'DOCKER_PORT', 3000, 1, 65535),
    indexing: {
      ocrEnabled: bool(env, 'INDEXING_OCR_ENABLED', false),
      ocrLanguages: list(raw(env, 'INDEXING_OCR_LANGUAGES') ?? 'eng', ','),
      tablesEnabled: bool(env, 'INDEXING_TABLES_ENABLED', false),
      upsertBatchSize: int(env, 'INDEX_UPSERT_BATCH_SIZE', 256, 1, 100_000),
    },

    llm: {
      backend,
      nCtx: int(env, 'N_CTX', 8192, 128, 1_048_576),
      nThreads: int(env, 'N_THREADS', inferenceThreads(cores), 1, 1024),
      nGpuLayers: int(env, 'N_GPU_LAYERS', 0, -1, 10_000),
      inferenceUrl: url(env, 'INFERENCE_URL'),
      hostedApiKey,
      hostedBaseUrl: url(env, 'HOSTED_LLM_BASE_URL'),
      hostedModel,
      classifierLlmEnabled: bool(env, 'RAG_CLASSIFIER_LLM_ENABLED', false),
      classifierLlmMaxTokens: int(env, 'RAG_CLASSIFIER_LLM_MAX_TOKENS', 64, 1, 4096),
    },
    embedDevice: oneOf(env, 'EMBED_DEVICE', ['auto', 'cpu', 'cuda'] as const, 'auto'),
    defaultEmbedder: oneOf(env, 'HEARTH_DEFAULT_EMBEDDER', ['shipped', 'build', 'off'] as const, 'shipped', true),
    defaultEmbedderDimension: int(env, 'HEARTH_DEFAULT_EMBEDDER_DIMENSION', 256, 8, 1024),
    modelWatchSeconds: int(env, 'MODEL_WATCH_SECONDS', 10, 0, 3600),
    embedAdapt: { enabled: bool(env, 'EMBED_ADAPT', true), minChunks: int(env, 'EMBED_ADAPT_MIN_CHUNKS', 2000, 100, 100_000_000), maxChunks: int(env, 'EMBED_ADAPT_MAX_CHUNKS', 50_000, 0, 100_000_000) },
    rerank: { topN: int(env, 'RERANK_TOP_N', 20, 1, 100), budgetMs: int(env, 'RERANK_BUDGET_MS', 300, 0, 10_000) },
    softMatch: {
      search: int(env, 'SEARCH_SOFT_MATCH_CHUNKS', 0, 0, 20_000),
      chat: int(env, env.CHAT_SOFT_MATCH_CHUNKS === undefined && env.EXTRACTIVE_SOFT_MATCH_CHUNKS !== undefined ? 'EXTRACTIVE_SOFT_MATCH_CHUNKS' : 'CHAT_SOFT_MATCH_CHUNKS', CHAT_SOFT_MATCH_CHUNKS, 0, 20_000),
    },

    email: {
      provider: emailProvider,
      smtpHost: raw(env, 'SMTP_HOST'),
      smtpPort,
      smtpFrom: raw(env, 'SMTP_FROM'),
      smtpUsername: raw(env, 'SMTP_USERNAME'),
      smtpPassword: secret('SMTP_PASSWORD', 'smtp_password'),
      smtpStartTls: bool(env, 'SMTP_STARTTLS', false),
      smtpTls: bool(env, 'SMTP_TLS', false),
    },
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    rateLimitReset: { perMinute: int(env, 'RATE_LIMIT_RESET', 10, 1, 10_000), burst: int(env, 'RATE_LIMIT_RESET_BURST', 20, 1, 10_000) },

    jobs: {
      storeBackend: oneOf(env, 'JOB_STORE_BACKEND', ['auto', 'redis', 'memory'] as const, 'auto'),
      stateTtlSeconds: int(env, 'JOB_STATE_TTL_SECONDS', 86_400, 1),
      historyRetentionDays: int(env, 'JOB_HISTORY_RETENTION_DAYS', 30, 1),
      schedulerLeaderLockEnabled: bool(env, 'SCHEDULER_LEADER_LOCK_ENABLED', true),
      schedulerLeaderLockTtlSeconds: int(env, 'SCHEDULER_LEADER_LOCK_TTL_SECONDS', 30, 3),
      schedulerTickSeconds: int(env, 'SCHEDULER_TICK_SECONDS', 10, 1, 60),
      retentionSweepsEnabled: bool(env, 'RETENTION_SWEEPS_ENABLED', true),
    },

    enableApiDocs: bool(env, 'ENABLE_API_DOCS', false),
    trustProxy: trustProxy(env),
    requestTimeoutSeconds: int(env, 'REQUEST_TIMEOUT_SECONDS', 900, 0, 86_400),
    dbPool: {
      size: int(env, 'DB_POOL_SIZE', 10, 1),
      maxOverflow: int(env, 'DB_MAX_OVERFLOW', 20, 0),
      timeoutSeconds: int(env, 'DB_POOL_TIMEOUT', 30, 1),
      recycleSeconds: int(env, 'DB_POOL_RECYCLE', 1800, 1),
    },

    oidcEnvProviders,
    seed,
    hardwareProfile,
    notices,
  };

  // No Redis client ships in this release: 'redis' is a requirement it cannot meet, 'auto' falls back to memory.
  if (config.jobs.storeBackend === 'redis') throw new ConfigError('JOB_STORE_BACKEND', 'redis is not supported by this release; use auto or memory');
  if (config.jobs.storeBackend === 'auto' && config.redisUrl) notices.push('JOB_STORE_BACKEND=auto: the Redis job store is not in this release, using memory');

  // Only now, with everything valid, may the quick start write generated secrets to disk.
  config.jwtSecretKey = jwtConfigured ?? generatedSecret(dataDir, 'jwt_secret_key', () => randomBytes(48).toString('base64url'), notices);
  config.mfaEncryptionKey = mfaConfigured
    ? mfaEncryptionKey
    : parseMfaKey(generatedSecret(dataDir, 'mfa_encryption_key', () => randomBytes(32).toString('base64'), notices));
  return config;
}

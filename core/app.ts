import type { Writable } from 'node:stream';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyInstance } from 'fastify';
import { guard } from './auth/guard.js';
import { TokenService } from './auth/tokens.js';
import type { Config } from './config.js';
import { SecretBox } from './crypto/secret-box.js';
import { type Db, openDatabase } from './db/database.js';
import { clientError, errorHandlers, frameworkError, MAX_PARAM_LENGTH, tooManyRequests } from './errors.js';
import { replaceJsonParser } from './json-body.js';
import { LogPrivacy, lazyRequestLogger, loggerOptions, pinoLevel } from './logger.js';
import { type Network, systemNetwork } from './net/ssrf-guard.js';
import { openApiOptions } from './openapi.js';
import { securityHeaders } from './security-headers.js';
import { SettingsRepository } from './settings/repository.js';
import { SettingsStore } from './settings/store.js';
import { Entitlement } from './tiers.js';
import { featurePlugins } from '../plugins/boot-order.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    db: Db;
    settings: SettingsStore;
    logPrivacy: LogPrivacy;
    secretBox: SecretBox;
    /** How outbound requests (integrations, OIDC) resolve hosts and reach the addresses the SSRF guard passed. */
    network: Network;
  }
}

interface BuildAppOptions {
  config: Config;
  /** Where log lines go (tests capture them); stdout by default. */
  logStream?: Writable;
  /** TLS_ENABLED: the checked certificate and key to serve HTTPS with (core/tls.ts); plain HTTP without. */
  https?: { cert: Buffer; key: Buffer };
  /** The system's DNS and routes by default; tests stand loopback servers in for public hosts. */
  network?: Network;
}

/** JSON bodies are validated strictly (no type coercion, no unknown fields); query strings and params are coerced. */
function validatorCompilers() {
  const shared = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false } as const;
  const body = addFormats.default(new Ajv({ ...shared, coerceTypes: false }));
  const other = addFormats.default(new Ajv({ ...shared, coerceTypes: 'array' }));
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) =>
    (httpPart === 'body' ? body : other).compile(schema);
}

/** Builds the whole service: core plugins first, then each feature of plugins/boot-order.ts in order. */
export async function buildApp({ config, logStream, https, network = systemNetwork }: BuildAppOptions): Promise<FastifyInstance> {
  const db = await openDatabase(config.databaseFile, config.sqliteCacheMiB);
  const settings = await SettingsStore.open(new SettingsRepository(db), config.seed);

  const logPrivacy = new LogPrivacy(config.jwtSecretKey, settings);
  // Node reads a server's request timeout when the server is made (setting it afterwards, as Fastify's own
  // requestTimeout does, changes nothing on Node 20): it goes into the server's options.
  const serverOptions = { requestTimeout: config.requestTimeoutSeconds * 1000 };
  const app = Fastify({
    logger: loggerOptions(settings.current('LOG_LEVEL'), logPrivacy, logStream),
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    trustProxy: config.trustProxy,
    requestTimeout: serverOptions.requestTimeout,
    forceCloseConnections: 'idle',
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkError,
    clientErrorHandler: clientError,
    ...(https ? { https: { cert: https.cert, key: https.key, ...serverOptions } } : { http: serverOptions }),
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompilers());
  app.setChildLoggerFactory(lazyRequestLogger);
  // The API speaks JSON (and multipart where a route registers it): anything else is a 415.
  app.removeContentTypeParser('text/plain');
  // A JSON body with a prototype key is refused as such, not as JSON that does not parse.
  replaceJsonParser(app);

  app.decorate('config', config);
  app.decorate('db', db);
  app.decorate('settings', settings);
  app.decorate('entitlement', new Entitlement());
  app.decorate('tokens', new TokenService(config.jwtSecretKey, config.jwtAlgorithm));
  app.decorate('logPrivacy', logPrivacy);
  app.decorate('secretBox', new SecretBox(config.mfaEncryptionKey));
  app.decorate('network', network);
  app.addHook('onClose', async () => db.destroy());

  settings.onChange((key, value) => {
    if (key === 'LOG_LEVEL') app.log.level = pinoLevel(value as Parameters<typeof pinoLevel>[0]);
  });
  for (const notice of config.notices) app.log.warn(notice);

  try {
    // 1. external plugins
    await app.register(securityHeaders, {
      hsts: config.tls.enabled && config.tls.hstsMaxAge > 0 ? { maxAge: config.tls.hstsMaxAge, includeSubDomains: true } : false,
      // Without TLS, upgrading asset requests to https would break the UI on a plain-HTTP LAN.
      contentSecurityPolicy: { directives: { upgradeInsecureRequests: config.tls.enabled ? [] : null } },
    });
    await app.register(rateLimit, { global: false, errorResponseBuilder: (_request, context) => tooManyRequests(context.ttl / 1000) });
    // Always on, before any route, so /docs can list every route; ENABLE_API_DOCS only gates the interactive UIs.
    await app.register(swagger, openApiOptions);
    // 2. core application plugins
    await app.register(errorHandlers);
    await app.register(guard);
    // 3. features, in boot order
    for (const plugin of featurePlugins) await app.register(plugin);
  } catch (error) {
    // A plugin that fails to boot must not leave the database open behind it.
    await app.close().catch(() => undefined);
    throw error;
  }

  return app as unknown as FastifyInstance;
}

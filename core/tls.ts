import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import http from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { ConfigError, type Config } from './config.js';

/**
 * TLS_ENABLED=1: HTTPS served in process from TLS_CERT_PATH / TLS_KEY_PATH, a renewed certificate put in
 * force without a restart, and (TLS_HTTP_REDIRECT_PORT) plain HTTP redirected to the HTTPS origin.
 */

interface TlsCredentials {
  cert: Buffer;
  key: Buffer;
  /** SHA-256 fingerprint of the leaf certificate, for the log. */
  fingerprint: string;
}

/** How often the certificate and key files are checked for a renewal: a stat of two files. */
const RENEWAL_POLL_MS = 2_000;
/** A renewal writes two files: wait for both before reading them. */
const RENEWAL_SETTLE_MS = 300;

function readPem(file: string, variable: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new ConfigError(variable, `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

/** Reads and checks the pair: a PEM certificate chain, an unencrypted PEM key, and the key belongs to the first certificate. */
export function readTlsCredentials(tls: Config['tls']): TlsCredentials {
  const cert = readPem(tls.certPath, 'TLS_CERT_PATH');
  const key = readPem(tls.keyPath, 'TLS_KEY_PATH');
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch {
    throw new ConfigError('TLS_CERT_PATH', `${tls.certPath} is not a PEM certificate`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError('TLS_KEY_PATH', `${tls.keyPath} is not an unencrypted PEM private key`);
  }
  if (!leaf.checkPrivateKey(privateKey)) throw new ConfigError('TLS_KEY_PATH', `${tls.keyPath} does not match the certificate in ${tls.certPath}`);
  try {
    createSecureContext({ cert, key }); // what the server will do with them: a broken chain fails here, not at the first handshake
  } catch (error) {
    throw new ConfigError('TLS_CERT_PATH', `${tls.certPath} cannot be served (${(error as Error).message})`);
  }
  return { cert, key, fingerprint: leaf.fingerprint256 };
}

/**
 * Polls both files (a stat follows symlinks, so certbot's live/ links and a copied-over file both show) and,
 * once they changed and pass the start-up checks, serves the new pair to new connections. A pair that fails
 * them (the key written before its certificate, a half-written file) keeps the current one until the next change.
 */
function reloadRenewedCertificates(server: HttpsServer, tls: Config['tls'], log: FastifyBaseLogger): () => void {
  let settle: NodeJS.Timeout | undefined;
  const reload = () => {
    try {
      const renewed = readTlsCredentials(tls);
      server.setSecureContext({ cert: renewed.cert, key: renewed.key });
      log.info({ fingerprint: renewed.fingerprint }, 'TLS certificate reloaded');
    } catch (error) {
      log.warn(`TLS certificate not reloaded, still serving the previous one: ${(error as Error).message}`);
    }
  };
  // Called on a change of the file's stat (content, inode, mode), not on reads.
  const changed = () => {
    clearTimeout(settle);
    settle = setTimeout(reload, RENEWAL_SETTLE_MS).unref();
  };
  for (const file of [tls.certPath, tls.keyPath]) watchFile(file, { interval: RENEWAL_POLL_MS, persistent: false }, changed);
  return () => {
    clearTimeout(settle);
    for (const file of [tls.certPath, tls.keyPath]) unwatchFile(file, changed);
  };
}

/** Where plain HTTP is sent: PUBLIC_URL when it is https, else https://SERVER_NAME on the HTTPS port. */
export function httpsOrigin(config: Pick<Config, 'publicUrl' | 'tls'>, httpsPort: number): string {
  if (config.publicUrl?.startsWith('https:')) return config.publicUrl;
  return new URL(`https://${config.tls.serverName}${httpsPort === 443 ? '' : `:${httpsPort}`}`).origin;
}

/**
 * Plain HTTP on TLS_HTTP_REDIRECT_PORT is answered 308 to the same path and query on the HTTPS origin. The
 * origin comes from configuration only: the request's Host is the client's word, and a redirect built from
 * it would send a victim wherever an attacker's link said.
 */
function redirectServer(origin: () => string): http.Server {
  return http.createServer((request, response) => {
    response.writeHead(308, { location: `${origin()}${pathAndQuery(request.url)}`, 'content-length': '0', connection: 'close' }).end();
  });
}

/** The path and query of a request line, whatever else it held (an absolute-form URL's host is dropped). */
function pathAndQuery(requestUrl: string | undefined): string {
  try {
    const { pathname, search } = new URL(requestUrl ?? '/', 'http://placeholder.invalid');
    return `${pathname}${search}`;
  } catch {
    return '/';
  }
}

/** Before listen: certificate reloads, and the redirect port, both ending with the app. A redirect port that cannot be listened on fails the start (exit 1). */
export function serveTls(app: FastifyInstance, config: Config): void {
  const stopReloading = reloadRenewedCertificates(app.server as unknown as HttpsServer, config.tls, app.log);
  app.addHook('onClose', async () => stopReloading());
  const redirectPort = config.tls.httpRedirectPort;
  if (redirectPort === undefined) return;

  try {
    httpsOrigin(config, 443);
  } catch {
    throw new ConfigError('SERVER_NAME', `"${config.tls.serverName}" is not a host name to redirect to`);
  }
  const httpsPort = () => (app.server.address() as AddressInfo).port;
  const redirect = redirectServer(() => httpsOrigin(config, httpsPort()));
  app.addHook('onReady', async () => {
    await new Promise<void>((resolve, reject) => {
      const refused = (error: NodeJS.ErrnoException) => reject(new Error(`TLS_HTTP_REDIRECT_PORT: port ${redirectPort} on ${config.host} cannot be used (${error.code ?? error.message})`));
      redirect.once('error', refused).listen(redirectPort, config.host, () => {
        redirect.off('error', refused).on('error', (err) => app.log.error({ err }, 'the plain-HTTP redirect port failed'));
        resolve();
      });
    });
  });
  app.addHook('onListen', async () => {
    const { port } = redirect.address() as AddressInfo;
    app.log.info(`redirecting plain HTTP on port ${port} to ${httpsOrigin(config, httpsPort())}`);
  });
  app.addHook('onClose', async () => {
    redirect.closeAllConnections();
    await new Promise((resolve) => redirect.close(resolve));
  });
}

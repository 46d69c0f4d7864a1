import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupServices, ensureBuilt, exitWithin, listening, startService, tempDir, waitFor, type Service } from '../fixtures/service-process.js';

/**
 * TLS_ENABLED=1 with the built service as a real process: HTTPS from TLS_CERT_PATH / TLS_KEY_PATH over a
 * real TLS socket on 127.0.0.1, a renewed certificate served without a restart, the plain-HTTP redirect
 * port, and a bad pair refused at start. The certificates are made here with openssl.
 */

const SERVER_NAME = 'hearth.test';

interface Pair {
  cert: string;
  key: string;
  fingerprint: string;
}

/** A self-signed P-256 certificate for SERVER_NAME and 127.0.0.1, as fullchain.pem / privkey.pem in `dir`. */
function makeCertificate(dir: string): Pair {
  const cert = path.join(dir, 'fullchain.pem');
  const key = path.join(dir, 'privkey.pem');
  const made = spawnSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-keyout', key, '-out', cert, '-subj', `/CN=${SERVER_NAME}`, '-addext', `subjectAltName=DNS:${SERVER_NAME},IP:127.0.0.1`,
  ], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`openssl failed: ${made.stderr}`);
  return { cert, key, fingerprint: new X509Certificate(readFileSync(cert)).fingerprint256 };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** SHA-256 fingerprint of the certificate the server presented. */
  fingerprint: string;
}

/** GET over a new TLS connection (no agent: no session reuse), trusting only the given certificates. */
function httpsGet(port: number, route: string, trusted: string[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = https.request({ host: '127.0.0.1', port, path: route, servername: SERVER_NAME, ca: trusted.map((file) => readFileSync(file)), agent: false }, (response) => {
      const fingerprint = (response.socket as TLSSocket).getPeerCertificate().fingerprint256;
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body, fingerprint }));
    });
    request.on('error', reject).end();
  });
}

/** Everything a server sends back to a plain-HTTP request before it closes the connection (or 5 s pass). */
function plainHttpExchange(port: number): Promise<string> {
  return new Promise((resolve) => {
    let received = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET /api/health HTTP/1.1\r\nHost: ${SERVER_NAME}\r\nConnection: close\r\n\r\n`));
    socket.setTimeout(5_000, () => socket.destroy());
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(received));
  });
}

function plainHttpGet(port: number, route: string, host: string): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    http.request({ host: '127.0.0.1', port, path: route, headers: { host }, agent: false }, (response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0, location: response.headers.location });
    }).on('error', reject).end();
  });
}

function tlsService(pair: Pick<Pair, 'cert' | 'key'>, extra: Record<string, string> = {}): Service {
  return startService({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: tempDir(),
    TLS_ENABLED: '1',
    SERVER_NAME,
    TLS_CERT_PATH: pair.cert,
    TLS_KEY_PATH: pair.key,
    LOG_LEVEL: 'INFO',
    ...extra,
  });
}

/** The port of "redirecting plain HTTP on port N to …". */
async function redirectPort(service: Service): Promise<number> {
  const line = await waitFor('the redirect line', service, () => service.logs().find((entry) => String(entry.msg).startsWith('redirecting plain HTTP on port ')));
  return Number(/on port (\d+) /.exec(String(line.msg))![1]);
}

beforeAll(() => {
  ensureBuilt();
}, 180_000);

afterAll(() => {
  cleanupServices();
});

describe('TLS_ENABLED=1 (node dist/server.js)', () => {
  it('serves the API over HTTPS only, puts a renewed certificate in force without a restart, and redirects the plain-HTTP port to the configured origin', async () => {
    const live = makeCertificate(tempDir());
    const renewed = makeCertificate(tempDir());
    const service = tlsService(live, { TLS_HTTP_REDIRECT_PORT: '0' });
    const url = await listening(service);
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const port = Number(new URL(url).port);

    const health = await httpsGet(port, '/api/health', [live.cert]);
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toHaveProperty('status');
    expect(health.fingerprint).toBe(live.fingerprint);
    expect(health.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');

    // Plain HTTP on the TLS port gets no API answer: the handshake fails and the connection is closed.
    const plain = await plainHttpExchange(port);
    expect(plain).not.toMatch(/^HTTP\/1\.[01] 2/);
    expect(plain).not.toContain('"status"');

    // A renewal overwrites both files in place (key first, as an ACME client may): new connections get the new certificate.
    copyFileSync(renewed.key, live.key);
    copyFileSync(renewed.cert, live.cert);
    await waitFor('the reload line', service, () => service.logs().find((entry) => entry.msg === 'TLS certificate reloaded' && entry.fingerprint === renewed.fingerprint), 20_000, 50);
    const after = await httpsGet(port, '/api/health', [live.cert, renewed.cert]);
    expect(after.status).toBe(200);
    expect(after.fingerprint).toBe(renewed.fingerprint);
    expect(service.exited()).toBe(false);

    // The redirect's target comes from SERVER_NAME and the HTTPS port, never from the request's Host.
    const redirect = await plainHttpGet(await redirectPort(service), '/api/health?probe=1', 'evil.example.test');
    expect(redirect).toEqual({ status: 308, location: `https://${SERVER_NAME}:${port}/api/health?probe=1` });

    service.child.kill('SIGTERM');
    expect(await exitWithin(service, 15_000)).toEqual({ code: 0, signal: null });
  });

  it('redirects to PUBLIC_URL when it is an https URL', async () => {
    const service = tlsService(makeCertificate(tempDir()), { TLS_HTTP_REDIRECT_PORT: '0', PUBLIC_URL: 'https://hearth.example.test:8443' });
    await listening(service);
    const redirect = await plainHttpGet(await redirectPort(service), '//evil.example.test/login?next=1', 'evil.example.test');
    expect(redirect).toEqual({ status: 308, location: 'https://hearth.example.test:8443/login?next=1' });
  });

  it('fails the start (exit 1, one line) when the redirect port is taken', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const service = tlsService(makeCertificate(tempDir()), { TLS_HTTP_REDIRECT_PORT: String(port) });
      expect(await exitWithin(service, 15_000)).toEqual({ code: 1, signal: null });
      expect(service.stderr()).toBe(`hearth: failed to start: TLS_HTTP_REDIRECT_PORT: port ${port} on 127.0.0.1 cannot be used (EADDRINUSE)\n`);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('refuses to start with a key that does not match the certificate: one line naming TLS_KEY_PATH, exit 78', async () => {
    const first = makeCertificate(tempDir());
    const other = makeCertificate(tempDir());
    const service = tlsService({ cert: first.cert, key: other.key });
    expect(await exitWithin(service, 10_000)).toEqual({ code: 78, signal: null });
    expect(service.stderr()).toBe(`hearth: invalid configuration: TLS_KEY_PATH: ${other.key} does not match the certificate in ${first.cert}\n`);
  });

  it('refuses to start with a certificate file it cannot read: one line naming TLS_CERT_PATH, exit 78', async () => {
    const pair = makeCertificate(tempDir());
    const missing = path.join(path.dirname(pair.cert), 'missing.pem');
    const service = tlsService({ cert: missing, key: pair.key });
    expect(await exitWithin(service, 10_000)).toEqual({ code: 78, signal: null });
    expect(service.stderr()).toBe(`hearth: invalid configuration: TLS_CERT_PATH: ${missing} cannot be read (ENOENT)\n`);
  });
});

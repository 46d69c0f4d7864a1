import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { ownerOnlyNewFiles, tightenDataFolders } from './owner-only.js';
import { readTlsCredentials, serveTls } from './tls.js';

/** Entry point: config, app, listen; SIGTERM/SIGINT finish in-flight requests and close the database. */
async function main(): Promise<void> {
  ownerOnlyNewFiles(); // before anything is written: generated secrets, the database, the index
  let config;
  let app;
  try {
    config = loadConfig();
    config.notices.push(...tightenDataFolders(config));
    const https = config.tls.enabled ? readTlsCredentials(config.tls) : undefined;
    // Plugins validate the settings they own (licence keys, job store) while the app is built.
    app = await buildApp({ config, https });
    if (https) serveTls(app, config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`hearth: invalid configuration: ${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }

  // Its own messages (a close that failed or ran out of time) go through the log too, not raw to stderr.
  closeWithGrace({ delay: 10_000, logger: { error: (message: unknown) => app.log.error(message) } }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
  });

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      app.log.fatal(`port ${config.port} on ${config.host} is already in use: stop the other service or set PORT`);
      process.stderr.write(`hearth: port ${config.port} on ${config.host} is already in use: stop the other service or set PORT\n`);
      await app.close();
      process.exit(1);
    }
    throw error;
  }
}

main().catch((error) => {
  process.stderr.write(`hearth: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

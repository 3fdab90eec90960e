import closeWithGrace from 'close-with-grace';
import { buildApp } from './app.js';
import { acquireServerLock, ServerLockError, sqliteFileOf, type ServerLock } from './db/server-lock.js';
import { ConfigError, loadConfig } from './platform/config.js';

/** `npm start` / `sunap serve`: the sandbox on embedded SQLite unless configured otherwise. */
export async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`sunap: configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  // One server per SQLite file (src/db/server-lock.ts); PostgreSQL serves any number.
  const sqliteFile = sqliteFileOf(config.databaseUrl);
  let lock: ServerLock | null = null;
  if (sqliteFile) {
    try {
      lock = acquireServerLock(sqliteFile);
    } catch (err) {
      if (err instanceof ServerLockError) {
        process.stderr.write(`sunap: could not start: ${err.message}\n`);
        process.exit(1);
      }
      throw err;
    }
  }
  let app;
  try {
    app = await buildApp(config);
  } catch (err) {
    lock?.release();
    throw err;
  }
  if (lock) app.addHook('onClose', async () => lock.release());
  // SIGTERM/SIGINT: stop accepting, finish in-flight requests and jobs, then exit.
  closeWithGrace({ delay: 15_000 }, async ({ err, signal }) => {
    if (err) app.log.error({ err }, 'closing after an uncaught error');
    else app.log.info({ signal }, 'shutting down');
    await app.close();
  });
  for (const warning of config.warnings) app.log.warn(warning);
  await app.listen({ port: config.port, host: config.host });
  app.log.info({
    mode: config.mode, db: config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl : 'postgres', docs: `${config.publicUrl}/docs`,
    cardProcessor: config.cardProcessor.kind, messaging: config.messaging.kind,
  }, `Sunap ${config.mode} ready at ${config.publicUrl}`);
}

const isMain = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/\\/g, '/').split('/').pop()!);
if (isMain) {
  serve().catch((err) => {
    process.stderr.write(`sunap: could not start: ${(err as Error).message}\n`);
    process.exit(1);
  });
}

import { migrate, openDatabase, type DatabaseHandle } from '../db/index.js';
import { ServiceClock } from '../platform/clock.js';
import { loadConfig, type Config } from '../platform/config.js';
import { SecretBox } from '../platform/crypto.js';

export interface Opened {
  config: Config;
  database: DatabaseHandle;
  box: SecretBox;
  clock: ServiceClock;
  /** Migrations this run applied: every command brings the schema up to date first. */
  applied: string[];
}

/**
 * What a command may use, opened only when it asks: help and usage errors never reach this, and
 * `serve` configures itself. The configuration is read here, so a bad variable surfaces as the
 * ConfigError of loadConfig (exit 2) and only for a command that needs it.
 */
export class Session {
  private opened: Promise<Opened> | null = null;
  private database: DatabaseHandle | null = null;

  open(): Promise<Opened> {
    this.opened ??= this.doOpen();
    return this.opened;
  }

  private async doOpen(): Promise<Opened> {
    const config = loadConfig();
    this.database = openDatabase(config.databaseUrl, { poolSize: 2, groupCommit: config.sqliteGroupCommit });
    const applied = await migrate(this.database.db);
    // The sandbox clock may have been moved forward; times the CLI writes follow it as the server's do.
    const clock = new ServiceClock(config.mode === 'sandbox' ? this.database.db : null);
    await clock.refresh();
    return { config, database: this.database, box: new SecretBox(config.secretKey), clock, applied };
  }

  async close(): Promise<void> {
    await this.database?.close();
  }
}

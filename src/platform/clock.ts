import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { readSetting, updateNumericSetting } from '../db/settings.js';

/**
 * The one clock every business time is read from (docs/architecture.md, "Rules of the code"):
 * expiries, retries, timestamps. In the sandbox it is real time plus an offset that developers
 * move (docs/reference.md, "Sandbox").
 */
export interface Clock {
  nowMs(): number;
  now(): Date;
}

/** The clock of a running service: its offset is shared through the database by every instance. */
export interface SharedClock extends Clock {
  /** Seconds the clock is ahead of real time. */
  offset(): number;
  /** Reads the shared offset again; returns it. */
  refresh(): Promise<number>;
  /** Moves the shared clock forward; returns the new offset. */
  advance(seconds: number): Promise<number>;
}

const OFFSET_KEY = 'clock.offsetSeconds';

/**
 * The offset lives in the database so that every instance and the CLI share it.
 * Reads are served from memory and refreshed by the job worker's poll, so a change made
 * by another instance is seen within one poll interval.
 */
export class ServiceClock implements SharedClock {
  private offsetSeconds = 0;
  constructor(private readonly db: Kysely<Database> | null) {}

  nowMs(): number {
    return Date.now() + this.offsetSeconds * 1000;
  }
  now(): Date {
    return new Date(this.nowMs());
  }
  offset(): number {
    return this.offsetSeconds;
  }

  async refresh(): Promise<number> {
    if (!this.db) return this.offsetSeconds;
    const value = await readSetting(this.db, OFFSET_KEY);
    this.offsetSeconds = value === undefined ? 0 : Number(value);
    return this.offsetSeconds;
  }

  /** Moves the shared clock forward; the update is relative so concurrent advances add up. */
  async advance(seconds: number): Promise<number> {
    if (!this.db) {
      this.offsetSeconds += seconds;
      return this.offsetSeconds;
    }
    this.offsetSeconds = await updateNumericSetting(this.db, OFFSET_KEY, (current) => current + seconds);
    return this.offsetSeconds;
  }
}

import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { readSetting, updateNumericSetting } from '../db/settings.js';
import { AppError } from './errors.js';

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
  /** Moves the shared clock forward (at most MAX_OFFSET_SECONDS ahead of real time in all); returns the new offset. */
  advance(seconds: number): Promise<number>;
  /** Puts the shared clock back on real time (offset 0); returns the new offset. */
  reset(): Promise<number>;
}

const OFFSET_KEY = 'clock.offsetSeconds';

/**
 * How far the sandbox clock may run ahead of real time: 400 days covers a year of monthly
 * invoices and the 30-day refresh tokens many times over, while keeping every business time
 * within a few years of today (KST formats, the database's timestamps).
 */
export const MAX_OFFSET_SECONDS = 400 * 86400;

/** The refusal of an advance past MAX_OFFSET_SECONDS (400 / -20 naming advanceSeconds). */
function beyondRange(current: number, seconds: number): AppError {
  return new AppError('VALIDATION', `advanceSeconds: would put the clock ${current + seconds} seconds ahead of real time; at most ${MAX_OFFSET_SECONDS} (400 days) in all, now ${current}. Send {"reset": true} to go back to real time`);
}

/**
 * The offset lives in the database so that every instance and the CLI share it.
 * Reads are served from memory and refreshed by the job worker's poll, so a change made
 * by another instance is seen within one poll interval.
 */
export class ServiceClock implements SharedClock {
  private offsetSeconds = 0;
  /**
   * Counts this instance's own writes (advance, reset). A refresh whose read began before a write
   * and ended after it holds the older value: applying it would move the clock back (a session
   * touched then would expire hours early), so it is dropped; the write's value is newer.
   */
  private writes = 0;
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
    const writes = this.writes;
    const value = await readSetting(this.db, OFFSET_KEY);
    if (writes === this.writes) this.offsetSeconds = value === undefined ? 0 : Number(value);
    return this.offsetSeconds;
  }

  /** Moves the shared clock forward; the update is relative so concurrent advances add up. */
  async advance(seconds: number): Promise<number> {
    if (!Number.isSafeInteger(seconds) || seconds < 0) throw new AppError('VALIDATION', 'advanceSeconds: must be a whole number from 0');
    const next = (current: number) => {
      if (current + seconds > MAX_OFFSET_SECONDS) throw beyondRange(current, seconds);
      return current + seconds;
    };
    if (!this.db) {
      this.offsetSeconds = next(this.offsetSeconds);
      return this.offsetSeconds;
    }
    // Checked inside the write transaction: two advances at once cannot pass the bound together.
    this.offsetSeconds = await updateNumericSetting(this.db, OFFSET_KEY, next);
    this.writes++;
    return this.offsetSeconds;
  }

  async reset(): Promise<number> {
    this.offsetSeconds = this.db ? await updateNumericSetting(this.db, OFFSET_KEY, () => 0) : 0;
    this.writes++;
    return this.offsetSeconds;
  }
}

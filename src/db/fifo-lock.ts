// The lock the SQLite drivers (src/db/sqlite-driver.ts) take turns at the one writer connection with.

/**
 * The one SQLite connection is handed straight to the oldest waiter. Kysely's own mutex wakes
 * every waiter on each release (one wins, the rest sleep again): O(waiters) of CPU per query
 * under load, with 50 requests waiting. Measured in BENCHMARKS.md.
 */
export class FifoLock {
  /** True while someone holds the lock, also while it is being handed to the next waiter. */
  held = false;
  private readonly waiters: (() => void)[] = [];
  lock(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  /** Passes the lock straight to the oldest waiter, so it is never free in between. */
  unlock(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}

/** Polls `fn` until it returns something truthy; fails naming `what` after `timeoutMs`. */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 15_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

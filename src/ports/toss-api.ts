import { callProvider, type ProviderAnswer } from './provider-http.js';

/** Before the look-up that follows a lost answer: long enough for Toss to have finished. */
export const TOSS_SETTLE_PAUSE_MS = 500;

/**
 * Toss Payments' REST API as both Toss adapters call it (the window's, src/ports/toss-checkout.ts,
 * and key-in's, src/ports/toss-card-processor.ts): the secret key as Basic auth, JSON bodies, one
 * time limit per call. Nothing here logs a request or an answer body.
 */
export class TossApi {
  /** One call + the pause + a look-up, or a cancel and its one retry: the longest an operation waits on Toss. */
  readonly callLimitMs: number;
  private readonly auth: string;

  constructor(private readonly s: { baseUrl: string; secretKey: string; timeoutMs: number }) {
    this.auth = `Basic ${Buffer.from(`${s.secretKey}:`).toString('base64')}`;
    this.callLimitMs = 2 * s.timeoutMs + TOSS_SETTLE_PAUSE_MS;
  }

  call(method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ProviderAnswer> {
    return callProvider(this.s.baseUrl + path, {
      method, timeoutMs: this.s.timeoutMs, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { authorization: this.auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    });
  }
}

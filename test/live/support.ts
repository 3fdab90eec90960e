import { after, before } from 'node:test';
import { INVOICE_TEMPLATE } from '../../src/invoicing/index.js';
import { withApp, type TestApp } from '../helpers/app.js';
import type { Engine } from '../helpers/db.js';
import { FakeSolapi, FAKE_SOLAPI } from '../fakes/solapi.js';
import { FakeToss } from '../fakes/toss.js';

/** A strong master key (random bytes, typed once): live mode refuses a weak one. */
export const LIVE_SECRET_KEY = '9c41e07fb2d85a6a1f3e4b7c90d2a5e83b6f1c4d7e0a9b2c5d8e1f4a7b0c3d6e';
/** The provider calls' time limit in these suites: short, so a lost answer is seen quickly. */
export const LIVE_TIMEOUT_MS = 1500;

export interface Fakes {
  toss: FakeToss;
  solapi: FakeSolapi;
}

/** Both provider fakes for the enclosing suite, started before it and stopped after. */
export function withFakes(): Fakes {
  const fakes = { toss: new FakeToss(), solapi: new FakeSolapi({ ...FAKE_SOLAPI, template: INVOICE_TEMPLATE }) };
  before(async () => {
    await fakes.toss.start();
    await fakes.solapi.start();
  });
  after(async () => {
    await fakes.toss.close();
    await fakes.solapi.close();
  });
  return fakes;
}

/** The environment of live mode pointed at the fakes (docs/going-live.md, "Rehearse live mode"). */
export function liveEnv(f: Fakes, over: Record<string, string> = {}): Record<string, string> {
  return {
    SUNAP_MODE: 'live', SUNAP_SECRET_KEY: LIVE_SECRET_KEY, SUNAP_PUBLIC_URL: 'https://pay.example.com', SUNAP_OUTBOUND_TIMEOUT_MS: String(LIVE_TIMEOUT_MS),
    SUNAP_CARD_PROCESSOR: 'toss-keyin', SUNAP_TOSS_SECRET_KEY: f.toss.secretKey, SUNAP_TOSS_API_URL: f.toss.url,
    SUNAP_MESSAGING_PROVIDER: 'solapi', SUNAP_SOLAPI_API_KEY: FAKE_SOLAPI.apiKey, SUNAP_SOLAPI_API_SECRET: FAKE_SOLAPI.apiSecret,
    SUNAP_SOLAPI_API_URL: f.solapi.url, SUNAP_SOLAPI_SENDER: FAKE_SOLAPI.sender, SUNAP_SOLAPI_PFID: FAKE_SOLAPI.pfId,
    SUNAP_SOLAPI_TEMPLATE_ID: FAKE_SOLAPI.templateId, ...over,
  };
}

/**
 * A live-mode app on a fresh database, pointed at the fakes. The env is read when the app
 * starts (the fakes' ports are known by then).
 */
export function withLiveApp(engine: Engine, f: Fakes, over: () => Record<string, string> = () => ({})): TestApp {
  const env = new Proxy({} as Record<string, string>, {
    ownKeys: () => Reflect.ownKeys(liveEnv(f, over())),
    getOwnPropertyDescriptor: (_, k) => ({ enumerable: true, configurable: true, value: liveEnv(f, over())[k as string] }),
    get: (_, k) => liveEnv(f, over())[k as string],
  });
  return withApp(engine, env);
}

/** The payment page's form post, as a customer's browser sends it (no JavaScript). */
export async function payOnPage(t: TestApp, redirectUrl: string, card: string, installment = '00'): Promise<{ status: number; text: string; location: string | null }> {
  const u = new URL(redirectUrl);
  const form = new URLSearchParams({
    tid: u.searchParams.get('tid')!, token: u.searchParams.get('token')!, cardNumber: card, expiry: '12/39', birth: '900101', cardPassword: '12', installment,
  });
  const res = await fetch(`${t.url}${u.pathname}/pay`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form, redirect: 'manual' });
  return { status: res.status, text: await res.text(), location: res.headers.get('location') };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

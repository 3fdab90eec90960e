import { kstCompact, parseKstCompact } from '../platform/kst.js';
import { apiSign, hexEqual, type SecretBox } from '../platform/crypto.js';
import { GatewayCodes as C, GatewayError } from '../platform/errors.js';
import { checker } from '../platform/validation.js';
import * as repo from './repository.js';
import type { Db, Payment, Store } from './repository.js';
import { SigningFields } from './schemas.js';

/**
 * Where API_SIGN is checked, for every signed gateway call (docs/reference.md, "Signing
 * gateway calls"): API_SIGN = lowercase hex SHA-256 of
 * TRANS_SEQNO + PLATFORM_CODE + STORE_CODE + TRANS_AT + API_KEY, compared in constant time
 * (upper-case hex is accepted), with any key the platform may sign with now.
 *
 * The order of checks is part of the contract: the signing fields are present and well formed
 * (4002) → the platform and store exist and belong together (4005) → the signature matches and
 * TRANS_AT lies within the window (3001). Only then are the other fields looked at.
 */
export interface SigningDeps {
  box: SecretBox;
  /** The time TRANS_AT is compared with: wall-clock time, as clients sign with their own clocks. */
  wallNowMs: () => number;
  /** The service clock (key rotation grace runs on it). */
  nowMs: () => number;
  /** How far TRANS_AT may be from now (SUNAP_SIGN_MAX_SKEW_SECONDS); 0 turns the check off. */
  maxSkewSeconds: number;
}

export interface SignedCall<P = Payment> {
  store: Store;
  /** The store's payment with the call's TRANS_SEQNO, read in the same query, if there is one. */
  payment: P | undefined;
}

/** The one query behind a signed call; searchPayment passes one that reads fewer payment columns. */
export type SigningLookup<P> = (db: Db, platformCode: string, storeCode: string, now: number, transSeqNo: string) => Promise<repo.SignedLookup<P> | undefined>;

const signingCheck = checker(SigningFields);

export async function verifySignedCall<P = Payment>(db: Db, deps: SigningDeps, body: Record<string, unknown>,
  lookup: SigningLookup<P> = repo.findStorePaymentForSigning as unknown as SigningLookup<P>): Promise<SignedCall<P>> {
  const err = signingCheck.firstError(body);
  if (err) throw new GatewayError(C.VALIDATION, err);
  const b = body as { TRANS_SEQNO: string; PLATFORM_CODE: string; STORE_CODE: string; TRANS_AT: string; API_SIGN: string };
  const transAt = parseKstCompact(b.TRANS_AT);
  if (transAt === null) throw new GatewayError(C.VALIDATION, 'TRANS_AT: is not a real date and time');
  const now = deps.nowMs();
  const found = await lookup(db, b.PLATFORM_CODE, b.STORE_CODE, now, b.TRANS_SEQNO);
  if (!found) throw new GatewayError(C.STORE, 'PLATFORM_CODE, STORE_CODE: unknown platform or store, or the store is not of this platform');
  const expected = (sealed: string) => apiSign(b.TRANS_SEQNO, b.PLATFORM_CODE, b.STORE_CODE, b.TRANS_AT, deps.box.open(sealed));
  if (!found.keys.some((sealed) => hexEqual(expected(sealed), b.API_SIGN))) {
    throw new GatewayError(C.SIGNATURE, 'API_SIGN: signature mismatch; check the field order, TRANS_AT and API_KEY');
  }
  const skew = deps.maxSkewSeconds;
  const wallNow = deps.wallNowMs();
  if (skew > 0 && Math.abs(wallNow - transAt) > skew * 1000) {
    throw new GatewayError(C.SIGNATURE, `TRANS_AT: more than ${skew} seconds away from server time (${kstCompact(wallNow)} KST)`);
  }
  return { store: found.store, payment: found.payment };
}

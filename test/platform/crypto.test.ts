import { createHash, createHmac, createSecretKey } from 'node:crypto';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { apiSign, hashPassword, hexEqual, hmacToken, randomToken, SecretBox, secretKeyOf, sha256Hex, tokenEqual, verifyPassword, webhookSignature } from '../../src/platform/crypto.js';
import { kstCompact, parseKstCompact } from '../../src/platform/kst.js';

test('API_SIGN test vector (docs/reference.md)', () => {
  assert.equal(
    apiSign('T1', 'PC0001', 'SD0001', '20260819120000', 'secret-key'),
    '42a14a0296f72c92793bd0f2de36de4752bfe5858ab4d50e286233ba93d4e133',
  );
});

test('signature comparison accepts upper-case hex and rejects others', () => {
  const s = apiSign('T1', 'PC0001', 'SD0001', '20260819120000', 'secret-key');
  assert.ok(hexEqual(s, s.toUpperCase()));
  assert.ok(!hexEqual(s, s.slice(0, 63) + (s.endsWith('3') ? '4' : '3')));
  assert.ok(!hexEqual(s, s.slice(0, 62)));
});

test('webhook signature test vector (docs/reference.md)', () => {
  assert.equal(
    webhookSignature('whsec_0123456789abcdef', 1758430800, Buffer.from('{"event":"bill.paid"}')),
    't=1758430800,v1=ae201a94ae2764a1f463601781a180495c5cdd9de3b7a29c09004cca3a251387',
  );
});

test('secrets sealed at rest open only with the same master key', () => {
  const box = new SecretBox(Buffer.alloc(32, 7));
  const sealed = box.seal('sk_live_secret');
  assert.ok(!sealed.includes('sk_live_secret'));
  assert.equal(box.open(sealed), 'sk_live_secret');
  assert.notEqual(box.seal('sk_live_secret'), sealed, 'a fresh IV every time');
  assert.throws(() => new SecretBox(Buffer.alloc(32, 8)).open(sealed));
});

test('passwords are scrypt hashes', async () => {
  const h = await hashPassword('correct horse');
  assert.ok(h.startsWith('scrypt$'));
  assert.ok(await verifyPassword('correct horse', h));
  assert.ok(!(await verifyPassword('wrong horse', h)));
});

test('KST time format round trip', () => {
  const ms = Date.UTC(2026, 7, 19, 3, 0, 0);
  assert.equal(kstCompact(ms), '20260819120000');
  assert.equal(parseKstCompact('20260819120000'), ms);
  assert.equal(parseKstCompact('20261319120000'), null);
  assert.equal(parseKstCompact('20260230120000'), null);
  // Each field at its edge: the last valid value, then one past it.
  assert.equal(parseKstCompact('20261231235959'), Date.UTC(2026, 11, 31, 14, 59, 59));
  for (const bad of ['20261231245959', '20261231236059', '20261231235960', '20260229120000', '20261200120000', '20260100120000']) assert.equal(parseKstCompact(bad), null, bad);
  assert.equal(parseKstCompact('20280229120000'), Date.UTC(2028, 1, 29, 3), 'a leap day');
  // Exactly 14 ASCII digits: shorter, longer, a sign, a space, a non-ASCII digit.
  for (const bad of ['2026081912000', '202608191200000', '+2026081912000', '2026081912000 ', '2026081912000٠', '2026-8-1912000']) assert.equal(parseKstCompact(bad), null, bad);
});

test('parseKstCompact reads back every second kstCompact writes', () => {
  fc.assert(fc.property(fc.integer({ min: 0, max: 4_000_000_000 }), (s) => parseKstCompact(kstCompact(s * 1000)) === s * 1000));
});

test('API_SIGN: every character of every field counts; the fields join with no separator', () => {
  const base = ['T1', 'PC0001', 'SD0001', '20260819120000', 'secret-key'] as const;
  const sig = apiSign(...base);
  assert.match(sig, /^[0-9a-f]{64}$/, 'lowercase hex');
  for (let i = 0; i < base.length; i++) {
    const changed = [...base] as [string, string, string, string, string];
    changed[i] = changed[i] + 'x';
    assert.notEqual(apiSign(...changed), sig, `field ${i}`);
  }
  // Only the concatenation is signed: moving a character between fields signs the same string.
  assert.equal(apiSign('T1P', 'C0001', 'SD0001', '20260819120000', 'secret-key'), sig);
  assert.equal(apiSign('T1', 'PC0001', 'SD0001', '20260819120000', '한글키'), apiSign('T1', 'PC0001', 'SD0001', '20260819120000', '한글키'));
  assert.notEqual(apiSign('T1', 'PC0001', 'SD0001', '20260819120000', '한글키'), apiSign('T1', 'PC0001', 'SD0001', '20260819120000', '한글기'), 'UTF-8 text keys');
});

test('hexEqual: a difference in any one position, or a length, is a mismatch', () => {
  const s = apiSign('T1', 'PC0001', 'SD0001', '20260819120000', 'secret-key');
  for (const i of [0, 31, 63]) {
    const c = s[i] === '0' ? '1' : '0';
    assert.equal(hexEqual(s, s.slice(0, i) + c + s.slice(i + 1)), false, `position ${i}`);
  }
  assert.equal(hexEqual(s, s + '0'), false);
  assert.equal(hexEqual('', ''), true);
  assert.equal(hexEqual('ABCDEF', 'abcdef'), true);
});

test('webhook signatures: t, the body and the secret all count', () => {
  const sig = webhookSignature('whsec_0123456789abcdef', 1758430800, '{"event":"bill.paid"}');
  assert.equal(webhookSignature('whsec_0123456789abcdef', 1758430800, Buffer.from('{"event":"bill.paid"}')), sig, 'string and bytes alike');
  assert.notEqual(webhookSignature('whsec_0123456789abcdef', 1758430801, '{"event":"bill.paid"}'), sig.replace('1758430800', '1758430801'));
  assert.notEqual(webhookSignature('whsec_0123456789abcdeF', 1758430800, '{"event":"bill.paid"}'), sig);
  assert.notEqual(webhookSignature('whsec_0123456789abcdef', 1758430800, '{"event":"bill.paid" }'), sig);
});

test('sha256Hex, hmacToken, tokenEqual and randomToken', () => {
  assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  // Text is hashed as its UTF-8 bytes (a Korean store name or key hashes the same in every client).
  assert.equal(sha256Hex('수납'), createHash('sha256').update(Buffer.from([0xec, 0x88, 0x98, 0xeb, 0x82, 0xa9])).digest('hex'));
  assert.equal(apiSign('T1', 'P', 'S', '20261122120000', '키'), createHash('sha256').update(Buffer.from('T1PS20261122120000\xed\x82\xa4', 'latin1')).digest('hex'));
  const key = Buffer.alloc(32, 1);
  const t = hmacToken(key, 'payment-page', 'id-1');
  assert.equal(t.length, 32, '24 bytes in base64url');
  assert.equal(hmacToken(key, 'payment-page', 'id-1'), t);
  assert.notEqual(hmacToken(key, 'payment-page', 'id-2'), t);
  assert.notEqual(hmacToken(key, 'other-purpose', 'id-1'), t);
  assert.notEqual(hmacToken(Buffer.alloc(32, 2), 'payment-page', 'id-1'), t);
  assert.equal(hmacToken(key, 'payment-page', 'id-1', 12).length, 16);
  assert.ok(tokenEqual(t, t));
  assert.ok(!tokenEqual(t, t.slice(0, -1) + (t.endsWith('A') ? 'B' : 'A')));
  assert.ok(!tokenEqual(t, t.slice(0, -1)));
  assert.match(randomToken(), /^[A-Za-z0-9_-]{43}$/);
  assert.match(randomToken(24), /^[A-Za-z0-9_-]{32}$/);
  assert.notEqual(randomToken(), randomToken());
});

test('a sealed value: its format, its master key id, and tampering are all checked', () => {
  const box = new SecretBox(Buffer.alloc(32, 7));
  assert.match(box.keyId, /^[0-9a-f]{8}$/);
  assert.notEqual(new SecretBox(Buffer.alloc(32, 8)).keyId, box.keyId);
  const sealed = box.seal('sk_live_secret');
  const parts = sealed.split('.');
  assert.equal(parts.length, 5);
  assert.equal(parts[0], 'v1');
  assert.equal(parts[1], box.keyId);
  const fresh = () => new SecretBox(Buffer.alloc(32, 7));
  assert.equal(fresh().open(sealed), 'sk_live_secret');
  assert.equal(fresh().open(box.seal('')), '', 'an empty secret seals and opens');
  assert.equal(fresh().open(box.seal('비밀 열쇠')), '비밀 열쇠');
  for (const bad of ['v2.' + parts.slice(1).join('.'), parts.slice(0, 4).join('.'), [parts[0], parts[1], '', parts[3], parts[4]].join('.'), [parts[0], parts[1], parts[2], '', parts[4]].join('.'), 'nonsense']) {
    assert.throws(() => fresh().open(bad), /unknown format/, bad);
  }
  assert.throws(() => fresh().open([parts[0], 'deadbeef', ...parts.slice(2)].join('.')), /sealed with master key deadbeef, but SUNAP_SECRET_KEY is /);
  // Tamper with the decoded bytes, not the text: the last base64url character of a 14-byte
  // ciphertext carries two unused bits, so swapping 'A' for 'B' there changes nothing decoded
  // (that made this test fail one run in sixteen, whenever the random IV gave a final 'A').
  const tampered = (i: number) => {
    const bytes = Buffer.from(parts[i]!, 'base64url');
    bytes[0] = bytes[0]! ^ 1;
    return parts.map((p, j) => (j === i ? bytes.toString('base64url') : p)).join('.');
  };
  for (const [i, what] of [[2, 'iv'], [3, 'tag'], [4, 'ciphertext']] as const) {
    assert.throws(() => fresh().open(tampered(i)), /unable to authenticate data/, `a changed ${what} fails the tag check`);
  }
});

/** Swaps a box's master key for zeros: what it still opens, it opened before. */
const breakKey = (box: SecretBox) => Object.assign(box as unknown as { key: unknown }, { key: createSecretKey(Buffer.alloc(32, 0)) });

test('opened secrets are remembered by their sealed form, at most 1000 of them', () => {
  const box = new SecretBox(Buffer.alloc(32, 7));
  const first = box.seal('first');
  assert.equal(box.open(first), 'first');
  // A remembered value is answered without decrypting: prove it by breaking the key afterwards.
  breakKey(box);
  assert.equal(box.open(first), 'first', 'remembered');
  const other = new SecretBox(Buffer.alloc(32, 9));
  const sealed = Array.from({ length: 1000 }, (_, i) => other.seal(`s${i}`));
  for (const s of sealed) other.open(s);
  breakKey(other);
  assert.equal(other.open(sealed[999]!), 's999', 'the newest is kept');
  assert.equal(other.open(sealed[1]!), 's1');
  const more = new SecretBox(Buffer.alloc(32, 10));
  const many = Array.from({ length: 1001 }, (_, i) => more.seal(`m${i}`));
  for (const s of many) more.open(s);
  breakKey(more);
  assert.throws(() => more.open(many[0]!), 'the oldest was let go at 1001 and must be decrypted again');
  assert.equal(more.open(many[1]!), 'm1');
});

test('password hashes: the format, the stored cost, and malformed hashes', async () => {
  const h = await hashPassword('correct horse');
  const [alg, n, salt, hash] = h.split('$');
  assert.equal(alg, 'scrypt');
  assert.equal(n, '16384');
  assert.equal(Buffer.from(salt!, 'base64url').length, 16);
  assert.equal(Buffer.from(hash!, 'base64url').length, 32);
  assert.notEqual(await hashPassword('correct horse'), h, 'a fresh salt each time');
  // A hash made with another cost verifies with the cost it names.
  const { scryptSync } = await import('node:crypto');
  const s2 = Buffer.alloc(16, 3);
  const cheap = `scrypt$1024$${s2.toString('base64url')}$${scryptSync('pw', s2, 32, { N: 1024, r: 8, p: 1 }).toString('base64url')}`;
  assert.equal(await verifyPassword('pw', cheap), true);
  assert.equal(await verifyPassword('pw', cheap.replace('scrypt$1024$', 'scrypt$2048$')), false);
  for (const bad of ['', 'bcrypt$16384$x$y', `scrypt$16384$$${hash}`, `scrypt$16384$${salt}$`, `scrypt$16384$${salt}`]) {
    assert.equal(await verifyPassword('correct horse', bad), false, bad);
  }
});

test('hmacToken: the KeyObject made once gives the HMAC of the key bytes (a test vector), per key, per purpose and value', () => {
  const key = Buffer.alloc(32, 7);
  const byHand = (k: Buffer, text: string, bytes = 24) => createHmac('sha256', k).update(text).digest().subarray(0, bytes).toString('base64url');
  // Twice: the second call uses the cached KeyObject.
  assert.equal(hmacToken(key, 'payment-page', 'pay-1'), byHand(key, 'payment-page:pay-1'));
  assert.equal(hmacToken(key, 'payment-page', 'pay-1'), byHand(key, 'payment-page:pay-1'));
  assert.equal(hmacToken(key, 'payment-page', 'pay-1', 32), byHand(key, 'payment-page:pay-1', 32));
  // Another Buffer with other bytes is another key, never the cached one.
  const other = Buffer.alloc(32, 8);
  assert.equal(hmacToken(other, 'payment-page', 'pay-1'), byHand(other, 'payment-page:pay-1'));
  assert.notEqual(hmacToken(other, 'payment-page', 'pay-1'), hmacToken(key, 'payment-page', 'pay-1'));
  assert.equal(secretKeyOf(key), secretKeyOf(key), 'made once per key');
  assert.notEqual(secretKeyOf(key), secretKeyOf(Buffer.alloc(32, 7)), 'per Buffer, not per content: a new Buffer is keyed anew');
});

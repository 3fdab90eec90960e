import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiSign, hexEqual, SecretBox, webhookSignature, hashPassword, verifyPassword } from '../../src/platform/crypto.js';
import { kstCompact, parseKstCompact } from '../../src/platform/clock.js';

test('API_SIGN test vector (decisions §4)', () => {
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

test('webhook signature test vector (decisions §5)', () => {
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
});

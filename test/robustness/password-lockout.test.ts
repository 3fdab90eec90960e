/**
 * The change-password form shares the sign-in lockout (docs/security.md, "Probes of issue 28"):
 * a stolen console session guessing the current password meets the same per-account lockout
 * (5 failures free, then 30 s) and the same per-address budget (SUNAP_LOGIN_RATE_LIMIT a
 * minute) as the sign-in form, counted together with sign-ins. Each number on both sides.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { forEachEngine, withApp, type TestApp } from '../helpers/app.js';
import { ConsoleClient, newOwner, ownerClient, textOf } from '../console/support.js';

async function change(c: ConsoleClient, current: string, next = 'a brand new password') {
  const r = await c.post('/console/account/password', { current, next }, { from: '/console/account' });
  return { status: r.status, text: textOf(r.text) };
}

async function signIn(t: TestApp, email: string, password: string): Promise<number> {
  const c = new ConsoleClient(t);
  return (await c.post('/console/login', { email, password, next: '/console' }, { from: '/console/login' })).status;
}

forEachEngine('change-password lockout', (engine) => {
  describe('per account (per-address limit off)', () => {
    const t = withApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '0' });

    test('4 wrong current passwords are each checked; the right one then changes it', async () => {
      const { owner, c } = await ownerClient(t);
      for (let i = 0; i < 4; i++) {
        const r = await change(c, `wrong-${i}`);
        assert.equal(r.status, 400);
        assert.ok(r.text.includes('지금 비밀번호가 맞지 않습니다.'));
      }
      assert.equal((await change(c, owner.password)).status, 303);
      assert.equal(await signIn(t, owner.email, 'a brand new password'), 303);
    });

    test('after 5 wrong: the right one is refused (429) for 30 s, on this form and on sign-in alike; at 31 s it works', async () => {
      const { owner, c } = await ownerClient(t);
      for (let i = 0; i < 5; i++) assert.equal((await change(c, `wrong-${i}`)).status, 400);
      const locked = await change(c, owner.password);
      assert.equal(locked.status, 429);
      assert.match(locked.text, /비밀번호 확인 시도가 너무 많습니다\. (\d+)초 후 다시 시도해 주세요\./);
      const wait = Number(/(\d+)초 후/.exec(locked.text)![1]);
      assert.ok(wait >= 29 && wait <= 30, `wait ${wait}`);
      // The same lockout: the sign-in form refuses the right password too, and the API's login.
      assert.equal(await signIn(t, owner.email, owner.password), 429);
      const api = await t.post('/app/v1/auth/login', { email: owner.email, password: owner.password, loginType: 'EMAIL' });
      assert.equal(api.body.result_code, -29);
      await t.post('/sandbox/clock', { advanceSeconds: 29 });
      assert.equal((await change(c, owner.password)).status, 429, 'at 29 s still locked');
      await t.post('/sandbox/clock', { advanceSeconds: 2 });
      assert.equal((await change(c, owner.password)).status, 303, 'after 30 s the right password works');
      await t.post('/sandbox/clock', { reset: true });
    });

    test('failed sign-ins count against the form too: 5 wrong sign-ins, then the form refuses the right password', async () => {
      const { owner, c } = await ownerClient(t);
      for (let i = 0; i < 5; i++) assert.equal(await signIn(t, owner.email, `wrong-${i}`), 401);
      assert.equal((await change(c, owner.password)).status, 429);
      await t.post('/sandbox/clock', { reset: true });
    });
  });

  describe('per address (SUNAP_LOGIN_RATE_LIMIT=8)', () => {
    const t = withApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '8' });

    test('sign-ins and password checks share the 8 a minute of one address; the 9th is refused, a minute later allowed', async () => {
      const x = await ownerClient(t);
      const y = await ownerClient(t);
      // Two sign-ins (2), then three wrong checks on each account (8): all checked.
      for (let i = 0; i < 3; i++) {
        assert.equal((await change(x.c, `wrong-x-${i}`)).status, 400);
        assert.equal((await change(y.c, `wrong-y-${i}`)).status, 400);
      }
      const ninth = await change(x.c, x.owner.password);
      assert.equal(ninth.status, 429, 'the 9th attempt of the address, right password or not');
      const fresh = await newOwner(t);
      assert.equal(await signIn(t, fresh.email, fresh.password), 429, 'and the sign-in form from that address');
      await t.post('/sandbox/clock', { advanceSeconds: 61 });
      assert.equal((await change(x.c, x.owner.password)).status, 303, 'a new minute');
    });
  });
});

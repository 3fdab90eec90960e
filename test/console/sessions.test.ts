/**
 * Each lifetime of a console session, at both sides of its boundary (docs/console.md, "Sign-in
 * and sessions"; issue 28, item 9): signed out after 12 hours without a request, 7 days after
 * signing in however active, and `last_seen_at` written at most every 5 minutes. The sandbox
 * clock moves business time; a little real time passes too, so "just before" is 5 seconds
 * before a boundary and "at" is the boundary itself (never earlier).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SESSION } from '../../src/console/sessions.js';
import { sha256Hex } from '../../src/platform/crypto.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { ConsoleClient, ownerClient } from './support.js';

const H = 3600;
const DAY = 86_400;

forEachEngine('console session lifetimes', (engine) => {
  const t = withApp(engine, { SUNAP_LOGIN_RATE_LIMIT: '0' });
  const db = () => t.app.sunap.database.db;
  const advance = (seconds: number) => t.app.sunap.clock.advance(seconds);
  const rowOf = (c: ConsoleClient) => db().selectFrom('console_sessions').selectAll().where('id', '=', sha256Hex(c.jar.get('sunap_console')!)).executeTakeFirstOrThrow();
  const signedIn = async (c: ConsoleClient) => {
    const r = await c.get('/console/account');
    if (r.status === 200) return true;
    assert.equal(r.status, 303);
    assert.match(r.location ?? '', /^\/console\/login/);
    return false;
  };

  test('the lifetimes themselves: 12 hours idle, 7 days in all, touched at most every 5 minutes', () => {
    assert.equal(SESSION.idleMs, 12 * H * 1000);
    assert.equal(SESSION.maxMs, 7 * DAY * 1000);
    assert.equal(SESSION.touchEveryMs, 5 * 60 * 1000);
  });

  test('idle: alive 5 s before 12 hours without a request, signed out at 12 hours', async () => {
    const { c } = await ownerClient(t);
    const row = await rowOf(c);
    assert.equal(Number(row.expires_at), Number(row.created_at) + 12 * H * 1000, 'a new session expires 12 h after signing in');
    await advance(12 * H - 5);
    assert.equal(await signedIn(c), true, '5 s before');
    const { c: other } = await ownerClient(t);
    await advance(12 * H);
    assert.equal(await signedIn(other), false, 'at 12 hours');
  });

  test('a request moves the idle end: 12 hours from the last request once 5 minutes have passed, not before', async () => {
    const { c } = await ownerClient(t);
    const first = await rowOf(c);
    await advance(5 * 60 - 5);
    assert.equal(await signedIn(c), true);
    const early = await rowOf(c);
    assert.equal(Number(early.last_seen_at), Number(first.last_seen_at), 'not written within 5 minutes');
    assert.equal(Number(early.expires_at), Number(first.expires_at));
    await advance(5);
    assert.equal(await signedIn(c), true);
    const touched = await rowOf(c);
    assert.ok(Number(touched.last_seen_at) >= Number(first.last_seen_at) + 5 * 60 * 1000, 'written at 5 minutes');
    assert.equal(Number(touched.expires_at), Number(touched.last_seen_at) + 12 * H * 1000, '12 hours from that request');
    // 12 h after signing in but less after the touch: still signed in; 12 h after the touch: out.
    await advance(12 * H - 5 * 60 + 5);
    assert.equal(await signedIn(c), true, 'the touch kept it');
    const again = await rowOf(c);
    await advance(12 * H);
    assert.equal(await signedIn(c), false, '12 hours after the last touch');
    assert.ok(Number(again.expires_at) <= t.app.sunap.clock.nowMs());
  });

  test('absolute: however active, alive 5 s before 7 days and signed out at 7 days; a touch never moves the end past it', async () => {
    const { c } = await ownerClient(t);
    const created = Number((await rowOf(c)).created_at);
    // A request every 11 hours keeps it from going idle.
    let elapsed = 0;
    while (elapsed + 11 * H < 7 * DAY - 5) {
      await advance(11 * H);
      elapsed += 11 * H;
      assert.equal(await signedIn(c), true, `active after ${elapsed / H} h`);
    }
    await advance(7 * DAY - 5 - elapsed);
    assert.equal(await signedIn(c), true, '5 s before 7 days');
    const last = await rowOf(c);
    assert.equal(Number(last.expires_at), created + 7 * DAY * 1000, 'the touch is capped at 7 days from signing in');
    await advance(5);
    assert.equal(await signedIn(c), false, 'at 7 days, a request a few seconds ago notwithstanding');
  });

  test('absolute, by the sign-in time itself: a session whose idle end lies past 7 days is still refused at 7 days', async () => {
    const { c } = await ownerClient(t);
    const row = await rowOf(c);
    // As a row written by an older version or by hand: the idle end far away.
    await db().updateTable('console_sessions').set({ expires_at: Number(row.created_at) + 30 * DAY * 1000 }).where('id', '=', row.id).execute();
    await advance(7 * DAY - 5);
    // Seen just now, so no request below writes the row (a touch would cap its end at 7 days).
    await db().updateTable('console_sessions').set({ last_seen_at: t.app.sunap.clock.nowMs() }).where('id', '=', row.id).execute();
    assert.equal(await signedIn(c), true, '5 s before');
    await advance(5);
    assert.equal(await signedIn(c), false, 'at 7 days after signing in');
    assert.equal(Number((await db().selectFrom('console_sessions').select('expires_at').where('id', '=', row.id).executeTakeFirstOrThrow()).expires_at), Number(row.created_at) + 30 * DAY * 1000, 'refused by the sign-in time, not by a moved idle end');
  });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { grantPoints } from '../../src/invoicing/accounts.js';
import { nextMonthlyPeriod } from '../../src/invoicing/schedule-time.js';
import { forEachEngine, withApp } from '../helpers/app.js';
import { addMember, ownerClient, textOf } from './support.js';

forEachEngine('console: schedules', (engine) => {
  const t = withApp(engine, {}, { runJobs: false });
  const billing = () => t.app.sunap.invoicing.billing;

  async function setUp(points: number) {
    const { owner, c } = await ownerClient(t, { points });
    const tpl = await t.app.sunap.invoicing.templates.create(owner.accountId, { name: '월 수강료', reason: '수강료', amount: 10_000 });
    const cls = await billing().classes.create(owner.accountId, { name: '바이올린 반', members: [{ name: '가', phone: '01011112222' }, { name: '나', phone: '01011113333' }] });
    return { owner, c, tpl: tpl.id, cls: cls.class.id };
  }

  /**
   * A run is never made before its planned moment: the sandbox clock is moved to it. Moved to a
   * minute before it first, before signing in, so the console session (12 hours idle) outlives
   * the move.
   */
  const untilPlanned = async (at: number) => {
    const d = at - t.app.sunap.clock.nowMs();
    if (d > 0) await t.app.sunap.clock.advance(Math.ceil(d / 1000));
  };

  test('a monthly schedule made in the console; pause and resume; the runs and what each sent', async () => {
    await untilPlanned(nextMonthlyPeriod(31, '09:00', t.app.sunap.clock.nowMs()).at - 60_000);
    const { owner, c, tpl, cls } = await setUp(1000);
    let r = await c.post('/console/schedules', { classId: cls, templateId: tpl, repeat: 'MONTHLY', dayOfMonth: '32', time: '09:00' }, { from: '/console/schedules/new' });
    assert.equal(r.status, 400);
    assert.ok(r.text.includes('<span class="field-error" id="dayOfMonth-error">매달 며칠은 1일에서 31일 사이여야 합니다.</span>'), textOf(r.text).slice(0, 600));
    r = await c.post('/console/schedules', { classId: cls, templateId: tpl, repeat: 'MONTHLY', dayOfMonth: '31', time: '09:00', beforeDays: '3', times: '9' }, { from: '/console/schedules/new' });
    assert.equal(r.status, 400);
    assert.ok(r.text.includes('<span class="field-error" id="times-error">최대 몇 번은 1번에서 5번 사이여야 합니다.</span>'));
    r = await c.post('/console/schedules', { classId: cls, templateId: tpl, repeat: 'MONTHLY', dayOfMonth: '31', time: '09:00', dueDays: '10', beforeDays: '3', afterDays: '2', times: '2' }, { from: '/console/schedules/new' });
    assert.equal(r.status, 303, textOf(r.text).slice(0, 600));
    const id = /sch_[A-Za-z0-9_-]+/.exec(r.location ?? '')![0];
    let page = textOf((await c.get(r.location!)).text);
    for (const s of ['예약했습니다.', '바이올린 반', '매달 31일 09:00 (없는 달은 말일)', '발송 후 10일', '기한 3일 전, 기한 뒤 2일마다, 최대 2번', '진행 중']) assert.ok(page.includes(s), `shows "${s}"`);
    assert.ok(textOf((await c.get('/console/schedules')).text).includes('바이올린 반'));

    r = await c.post(`/console/schedules/${id}/pause`, {}, { from: `/console/schedules/${id}` });
    assert.equal(r.status, 303);
    assert.ok(textOf((await c.get(r.location!)).text).includes('일시 정지'));
    r = await c.post(`/console/schedules/${id}/resume`, {}, { from: `/console/schedules/${id}` });
    assert.equal(r.status, 303);

    const p = nextMonthlyPeriod(31, '09:00', t.app.sunap.clock.nowMs());
    await untilPlanned(p.at);
    await billing().runner.run(id, p.period);
    page = textOf((await c.get(`/console/schedules/${id}`)).text);
    assert.ok(page.includes('발송함') && page.includes('2/2명') && page.includes('20P'), page.slice(-800));
    const run = (await billing().schedules.get(owner.accountId, id)).runs[0]!;
    const detail = textOf((await c.get(`/console/schedules/${id}/runs/${run.id}`)).text);
    assert.ok(detail.includes('가') && detail.includes('10,000원') && detail.includes('20P 사용'));
    const audit = await t.app.sunap.database.db.selectFrom('audit_log').select('action').where('tenant_id', '=', owner.accountId).where('action', 'like', 'schedule.%').execute();
    assert.deepEqual(audit.map((a) => a.action).sort(), ['schedule.create', 'schedule.pause', 'schedule.resume']);
  });

  test('short of points: a banner on the overview and the schedules, gone once the run is sent', async () => {
    await untilPlanned(nextMonthlyPeriod(1, '09:00', t.app.sunap.clock.nowMs()).at - 60_000);
    const { owner, c, tpl, cls } = await setUp(10);
    const s = await billing().schedules.create(owner.accountId, t.storeCode, { classId: cls, templateId: tpl, repeat: 'MONTHLY', dayOfMonth: 1, time: '09:00' });
    const p = nextMonthlyPeriod(1, '09:00', t.app.sunap.clock.nowMs());
    await untilPlanned(p.at);
    await billing().runner.run(s.id, p.period);
    for (const path of ['/console', '/console/schedules', `/console/schedules/${s.id}`]) {
      const text = textOf((await c.get(path)).text);
      assert.ok(text.includes('포인트가 부족해 예약 발송 1건을 보내지 못하고 있습니다.') && text.includes('20P 필요') && text.includes('보유 10P'), `${path}: ${text.slice(0, 600)}`);
    }
    assert.ok(textOf((await c.get(`/console/schedules/${s.id}`)).text).includes('포인트 부족: 대기 중'));
    await grantPoints(t.app.sunap.database.db, t.app.sunap.clock.nowMs(), { email: owner.email, amount: 100 });
    await billing().runner.run(s.id, p.period);
    assert.ok(!textOf((await c.get('/console')).text).includes('포인트가 부족해'));
  });

  test('a viewer reads schedules but cannot make or pause one', async () => {
    const { owner, c, tpl, cls } = await setUp(0);
    const s = await billing().schedules.create(owner.accountId, t.storeCode, { classId: cls, templateId: tpl, repeat: 'MONTHLY', dayOfMonth: 1, time: '09:00' });
    const viewer = await addMember(t, c, 'viewer');
    assert.equal((await viewer.c.get(`/console/schedules/${s.id}`)).status, 200);
    assert.equal((await viewer.c.get('/console/schedules/new')).status, 403);
    assert.equal((await viewer.c.post(`/console/schedules/${s.id}/pause`, {}, { from: `/console/schedules/${s.id}` })).status, 403);
    const other = await ownerClient(t);
    assert.equal((await other.c.get(`/console/schedules/${s.id}`)).status, 404);
  });
});

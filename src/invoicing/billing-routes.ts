import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { Clock } from '../platform/clock.js';
import { ok, type App } from '../platform/http.js';
import { kstMonth } from '../platform/kst.js';
import type { Billing } from './billing.js';
import { ClassBody, ClassMembersBody, MAX_CLASS_MEMBERS, MAX_CLASSES } from './classes.js';
import { Envelope, ErrorEnvelope } from './schemas.js';
import { MAX_SCHEDULES, POINTS_RETRY_MINUTES, ScheduleBody } from './schedules.js';
import { ONCE_PERIOD_DAYS } from './schedule-time.js';

type Hooks = Pick<RouteShorthandOptions, 'onRequest' | 'preValidation'>;

const tags = ['Billing'];
const security = [{ accessToken: [] as string[] }];
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorEnvelope]));
const doc = (summary: string, description: string) => ({ tags, summary, description, security });

const ClassId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'cls_…', examples: ['cls_Q2xhc3NBYmNk'] }) });
const MemberParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }), memberId: Type.String({ minLength: 1, maxLength: 64 }) });

const ClassSummary = Type.Object({
  id: Type.String({ examples: ['cls_Q2xhc3NBYmNk'] }), name: Type.String({ examples: ['초등 피아노 A반'] }), memo: Type.Union([Type.String(), Type.Null()]),
  archived: Type.Boolean(), memberCount: Type.Integer({ examples: [30] }), createdAt: Type.Integer({ description: 'Epoch milliseconds' }), updatedAt: Type.Integer(),
});
const MemberView = Type.Object({
  id: Type.String({ examples: ['mbr_TWVtYmVyQWJj'] }), name: Type.String({ examples: ['김하늘'] }), phone: Type.String({ examples: ['01012345678'] }),
  guardianPhone: Type.Union([Type.String(), Type.Null()]), amount: Type.Union([Type.Integer(), Type.Null()], { description: "null: the template's amount" }),
  items: Type.Array(Type.Object({ name: Type.String(), price: Type.Integer(), qty: Type.Optional(Type.Integer()) }, { additionalProperties: true })),
  memo: Type.Union([Type.String(), Type.Null()]),
});
const ClassDetail = Type.Object({ class: ClassSummary, members: Type.Array(MemberView) });
const ListQuery = Type.Object({
  archived: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true: only archived classes (default false: the others)' })),
});

const CLASS_EXAMPLE = {
  name: '초등 피아노 A반', memo: '월·수·금 4시',
  members: [
    { name: '김하늘', phone: '01012345678', guardianPhone: '01098765432', amount: 128000 },
    { name: '이바다', phone: '01023456789', items: [{ name: '레슨', price: 100000 }, { name: '교재', price: 28000 }], amount: 128000 },
    { name: '박구름', phone: '01034567890' },
  ],
};

/**
 * Billing that runs itself (docs/reference.md, section 17): classes, with the invoicing
 * routes' token hook; the role each call needs is its action's in API_ROUTES (src/invoicing/access.ts).
 */
export function billingRoutes(app: App, d: { billing: Billing; clock: Clock; hooks: Hooks; accountOf: (req: FastifyRequest) => string; storeOf: (req: FastifyRequest) => string }): void {
  const { classes, schedules } = d.billing;
  const acc = d.accountOf;

  app.get('/app/v1/classes', {
    ...d.hooks,
    schema: { ...doc('List the team\'s classes, newest first', 'Each with its member count. archived=true lists the archived ones instead.'), querystring: ListQuery, response: { 200: Envelope(Type.Object({ classes: Type.Array(ClassSummary) })), ...errors(400, 401, 403) } },
  }, async (req) => ok(req, { classes: await classes.list(acc(req), { archived: req.query.archived === 'true' }) }));

  app.post('/app/v1/classes', {
    ...d.hooks,
    schema: {
      ...doc('Create a class', `A name (1–40), a memo, and up to ${MAX_CLASS_MEMBERS} members: name 1–30, phone 10–11 digits, optional guardianPhone (the messages go there), amount (absent: the template's) with optional items that add up to it, memo. A person (name and phone) is in a class once. At most ${MAX_CLASSES} classes per team.`),
      body: { ...ClassBody, examples: [CLASS_EXAMPLE] }, response: { 200: Envelope(ClassDetail), ...errors(400, 401, 403) },
    },
  }, async (req) => ok(req, await classes.create(acc(req), req.body)));

  app.get('/app/v1/classes/:id', {
    ...d.hooks,
    schema: { ...doc('A class with its members', 'Another team\'s class: 404 / -10.'), params: ClassId, response: { 200: Envelope(ClassDetail), ...errors(400, 401, 403, 404) } },
  }, async (req) => ok(req, await classes.get(acc(req), req.params.id)));

  app.put('/app/v1/classes/:id', {
    ...d.hooks,
    schema: { ...doc('Rename a class or change its memo', 'Members are changed with .../members.'), params: ClassId, body: { ...Type.Omit(ClassBody, ['members']), examples: [{ name: '초등 피아노 B반', memo: '화·목 5시' }] }, response: { 200: Envelope(ClassSummary), ...errors(400, 401, 403, 404) } },
  }, async (req) => ok(req, await classes.update(acc(req), req.params.id, req.body)));

  for (const [path, archived] of [['archive', true], ['unarchive', false]] as const) {
    app.post(`/app/v1/classes/:id/${path}`, {
      ...d.hooks,
      schema: {
        ...doc(archived ? 'Archive a class' : 'Bring an archived class back', archived ? 'Hidden from the list; its schedules bill nothing while it is archived (each run says so). No body.' : 'Listed again; its schedules bill it again from their next run. No body.'),
        params: ClassId, response: { 200: Envelope(ClassSummary), ...errors(400, 401, 403, 404) },
      },
    }, async (req) => ok(req, await classes.setArchived(acc(req), req.params.id, archived)));
  }

  app.put('/app/v1/classes/:id/members', {
    ...d.hooks,
    schema: { ...doc('Replace every member of a class', 'All or nothing; the same rules as creation.'), params: ClassId, body: { ...ClassMembersBody, examples: [{ members: CLASS_EXAMPLE.members }] }, response: { 200: Envelope(Type.Array(MemberView)), ...errors(400, 401, 403, 404) } },
  }, async (req) => ok(req, await classes.replaceMembers(acc(req), req.params.id, req.body.members)));

  app.post('/app/v1/classes/:id/members', {
    ...d.hooks,
    schema: { ...doc('Add members at the end of a class', `Someone already in the class (same name and phone): 400 / -20. At most ${MAX_CLASS_MEMBERS} in all.`), params: ClassId, body: { ...ClassMembersBody, examples: [{ members: [{ name: '최별', phone: '01045678901', amount: 128000 }] }] }, response: { 200: Envelope(Type.Array(MemberView)), ...errors(400, 401, 403, 404) } },
  }, async (req) => ok(req, await classes.addMembers(acc(req), req.params.id, req.body.members)));

  app.delete('/app/v1/classes/:id/members/:memberId', {
    ...d.hooks,
    schema: { ...doc('Remove a member from a class', 'Invoices already sent stay as they are.'), params: MemberParams, response: { 200: Envelope(Type.Null()), ...errors(400, 401, 403, 404) } },
  }, async (req) => {
    await classes.removeMember(acc(req), req.params.id, req.params.memberId);
    return ok(req);
  });

  // ---- schedules --------------------------------------------------------------------------------

  const N = <T extends TSchema>(x: T) => Type.Union([x, Type.Null()]);
  const Kst = Type.String({ description: "yyyy-MM-dd'T'HH:mm:ss, KST", examples: ['2026-12-01T09:00:00'] });
  const ScheduleView = Type.Object({
    id: Type.String({ examples: ['sch_U2NoZWR1bGVB'] }), classId: Type.String(), className: N(Type.String()), templateId: Type.String(), templateName: N(Type.String()),
    repeat: Type.String({ examples: ['MONTHLY'] }), dayOfMonth: N(Type.Integer({ examples: [1] })), time: Type.String({ examples: ['09:00'] }), at: N(Kst),
    dueDays: N(Type.Integer()), reminders: N(Type.Object({ beforeDays: N(Type.Integer()), afterDays: N(Type.Integer()), times: Type.Integer() })),
    status: Type.String({ description: 'ACTIVE, PAUSED or ENDED' }), nextRunAt: N(Kst), createdAt: Kst,
  });
  const RunView = Type.Object({
    id: Type.String(), period: Type.String({ examples: ['2026-12'] }), plannedAt: Kst, periodEndsAt: Kst,
    status: Type.String({ description: 'SENT, WAITING_POINTS, MISSED or SKIPPED' }), recipients: Type.Integer({ examples: [30] }), invoices: Type.Integer({ examples: [30] }),
    pointsNeeded: Type.Integer({ examples: [300] }), pointsSpent: Type.Integer({ examples: [300] }), tries: Type.Integer(), message: N(Type.String()), finishedAt: N(Kst),
  });
  const ScheduleId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, examples: ['sch_U2NoZWR1bGVB'] }) });
  const SCHEDULE_EXAMPLE = { classId: 'cls_Q2xhc3NBYmNk', templateId: 'tpl_VGVtcGxhdGVB', repeat: 'MONTHLY', dayOfMonth: 1, time: '09:00', dueDays: 10, reminders: { beforeDays: 3, afterDays: 2, times: 2 } };

  app.get('/app/v1/schedules', {
    ...d.hooks,
    schema: { ...doc('List the team\'s schedules', 'Newest first, each with its class and template names, status and next run.'), response: { 200: Envelope(Type.Object({ schedules: Type.Array(ScheduleView) })), ...errors(401, 403) } },
  }, async (req) => ok(req, { schedules: await schedules.list(acc(req)) }));

  app.post('/app/v1/schedules', {
    ...d.hooks,
    schema: {
      ...doc('Bill a class with a template every month, or once', `MONTHLY: dayOfMonth 1–31 (29–31 fall on the last day of a shorter month) and time HH:MM, KST. ONCE: at (yyyy-MM-dd'T'HH:mm, KST). Each period (a month, or the one time) is billed at most once. A run short of points sends nothing, says so in the audit log and the console, and is tried again every ${POINTS_RETRY_MINUTES} minutes until its period ends (the next month's moment; ${ONCE_PERIOD_DAYS} days for ONCE). dueDays (0–365) overrides the template's "due N days after sending"; reminders {beforeDays, afterDays, times} reminds the unpaid. At most ${MAX_SCHEDULES} schedules per team.`),
      body: Type.Object(ScheduleBody.properties, { examples: [SCHEDULE_EXAMPLE] }), response: { 200: Envelope(ScheduleView), ...errors(400, 401, 403) },
    },
  }, async (req) => ok(req, await schedules.create(acc(req), d.storeOf(req), req.body)));

  app.get('/app/v1/schedules/:id', {
    ...d.hooks,
    schema: { ...doc('A schedule and its runs', 'The last 36 runs, newest first: what each billed (invoices) and spent (pointsSpent), or why it waits or was skipped.'), params: ScheduleId, response: { 200: Envelope(Type.Object({ schedule: ScheduleView, runs: Type.Array(RunView) })), ...errors(400, 401, 403, 404) } },
  }, async (req) => ok(req, await schedules.get(acc(req), req.params.id)));

  app.get('/app/v1/schedules/:id/runs/:runId', {
    ...d.hooks,
    schema: {
      ...doc('One run with the invoices it made', 'Each invoice: uniqueId, receiverName, amount, status, sendStatus, dueDate.'),
      params: Type.Object({ id: Type.String({ maxLength: 64 }), runId: Type.String({ maxLength: 64 }) }),
      response: { 200: Envelope(Type.Object({ run: RunView, invoices: Type.Array(Type.Object({ uniqueId: Type.String(), receiverName: Type.String(), amount: Type.Integer(), status: Type.String(), sendStatus: Type.String(), dueDate: N(Type.String()) })) })), ...errors(400, 401, 403, 404) },
    },
  }, async (req) => ok(req, await schedules.run(acc(req), req.params.id, req.params.runId)));

  for (const [path, pause] of [['pause', true], ['resume', false]] as const) {
    app.post(`/app/v1/schedules/:id/${path}`, {
      ...d.hooks,
      schema: {
        ...doc(pause ? 'Pause a schedule' : 'Resume a paused schedule', pause ? 'Nothing is billed while paused. No body.' : 'Billing goes on from the next planned moment (a month whose moment passed while paused is not billed late); a one-time schedule not yet billed runs at its moment, or at once if it passed. No body.'),
        params: ScheduleId, response: { 200: Envelope(ScheduleView), ...errors(400, 401, 403, 404, 409) },
      },
    }, async (req) => ok(req, pause ? await schedules.pause(acc(req), req.params.id) : await schedules.resume(acc(req), req.params.id)));
  }

  // ---- the month of a class ------------------------------------------------------------------

  const { month: months } = d.billing;
  const Totals = Type.Object({ count: Type.Integer(), amount: Type.Integer() });
  const MonthQuery = Type.Object({ month: Type.Optional(Type.String({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', 'x-reason': 'must be yyyy-MM', description: 'KST month of billing (default: this month)', examples: ['2026-12'] })) });
  const ClassMonth = Type.Object({
    classId: Type.String(), className: Type.String(), month: Type.String({ examples: ['2026-12'] }),
    billed: Totals, paid: Totals, unpaid: Totals, overdue: Totals, canceled: Totals,
    unpaidList: Type.Array(Type.Object({
      uniqueId: Type.String(), transSeqNo: Type.String(), receiverName: Type.String(), receiverPhone: Type.String(), guardianPhone: N(Type.String()),
      amount: Type.Integer(), dueDate: N(Type.String()), overdue: Type.Boolean(), sendCount: Type.Integer(), lastSentAt: N(Kst), sendChannel: Type.String(),
    })),
    remindCost: Type.Integer({ description: 'Points "remind now" takes: one message per unpaid invoice already sent', examples: [120] }),
  });
  const monthOf = (q: { month?: string }) => q.month ?? kstMonth(d.clock.nowMs());

  app.get('/app/v1/classes/:id/month', {
    ...d.hooks,
    schema: {
      ...doc('The month of a class at a glance', 'What the class was billed in a KST month (by creation): billed, paid, unpaid, overdue (unpaid past the due date) and cancelled, each a count and an amount; the unpaid one by one; and the points "remind now" would take.'),
      params: ClassId, querystring: MonthQuery, response: { 200: Envelope(ClassMonth), ...errors(400, 401, 403, 404) },
    },
  }, async (req) => ok(req, await months.month(acc(req), req.params.id, monthOf(req.query))));

  app.post('/app/v1/classes/:id/remind', {
    ...d.hooks,
    schema: {
      ...doc('Remind the unpaid of a class\'s month now', 'A reminder (a resend: the same link, one message\'s points, REMINDER in the history) to every unpaid invoice of the month already sent, now, or at 08:00 KST when it is between 21:00 and 08:00. Read remindCost from the month first. Answers how many and when.'),
      params: ClassId, querystring: MonthQuery, response: { 200: Envelope(Type.Object({ reminders: Type.Integer(), at: Kst })), ...errors(400, 401, 403, 404) },
    },
  }, async (req) => ok(req, await months.remindNow(acc(req), req.params.id, monthOf(req.query))));
}

import { Type } from '@sinclair/typebox';
import type { FastifyRequest, RouteShorthandOptions } from 'fastify';
import { ok, type App } from '../platform/http.js';
import type { Billing } from './billing.js';
import { ClassBody, ClassMembersBody, MAX_CLASS_MEMBERS, MAX_CLASSES } from './classes.js';
import { Envelope, ErrorEnvelope } from './schemas.js';

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
 * routes' token hooks: reading needs any member of the team, changes a manager or an owner.
 */
export function billingRoutes(app: App, d: { billing: Billing; hooks: Hooks; writeHooks: Hooks; accountOf: (req: FastifyRequest) => string }): void {
  const { classes } = d.billing;
  const acc = d.accountOf;

  app.get('/app/v1/classes', {
    ...d.hooks,
    schema: { ...doc('List the team\'s classes, newest first', 'Each with its member count. archived=true lists the archived ones instead.'), querystring: ListQuery, response: { 200: Envelope(Type.Object({ classes: Type.Array(ClassSummary) })), ...errors(400, 401, 403) } },
  }, async (req) => ok(req, { classes: await classes.list(acc(req), { archived: req.query.archived === 'true' }) }));

  app.post('/app/v1/classes', {
    ...d.writeHooks,
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
    ...d.writeHooks,
    schema: { ...doc('Rename a class or change its memo', 'Members are changed with .../members.'), params: ClassId, body: { ...Type.Omit(ClassBody, ['members']), examples: [{ name: '초등 피아노 B반', memo: '화·목 5시' }] }, response: { 200: Envelope(ClassSummary), ...errors(400, 401, 403, 404) } },
  }, async (req) => ok(req, await classes.update(acc(req), req.params.id, req.body)));

  for (const [path, archived] of [['archive', true], ['unarchive', false]] as const) {
    app.post(`/app/v1/classes/:id/${path}`, {
      ...d.writeHooks,
      schema: {
        ...doc(archived ? 'Archive a class' : 'Bring an archived class back', archived ? 'Hidden from the list; its schedules bill nothing while it is archived (each run says so). No body.' : 'Listed again; its schedules bill it again from their next run. No body.'),
        params: ClassId, response: { 200: Envelope(ClassSummary), ...errors(400, 401, 403, 404) },
      },
    }, async (req) => ok(req, await classes.setArchived(acc(req), req.params.id, archived)));
  }

  app.put('/app/v1/classes/:id/members', {
    ...d.writeHooks,
    schema: { ...doc('Replace every member of a class', 'All or nothing; the same rules as creation.'), params: ClassId, body: { ...ClassMembersBody, examples: [{ members: CLASS_EXAMPLE.members }] }, response: { 200: Envelope(Type.Array(MemberView)), ...errors(400, 401, 403, 404) } },
  }, async (req) => ok(req, await classes.replaceMembers(acc(req), req.params.id, req.body.members)));

  app.post('/app/v1/classes/:id/members', {
    ...d.writeHooks,
    schema: { ...doc('Add members at the end of a class', `Someone already in the class (same name and phone): 400 / -20. At most ${MAX_CLASS_MEMBERS} in all.`), params: ClassId, body: { ...ClassMembersBody, examples: [{ members: [{ name: '최별', phone: '01045678901', amount: 128000 }] }] }, response: { 200: Envelope(Type.Array(MemberView)), ...errors(400, 401, 403, 404) } },
  }, async (req) => ok(req, await classes.addMembers(acc(req), req.params.id, req.body.members)));

  app.delete('/app/v1/classes/:id/members/:memberId', {
    ...d.writeHooks,
    schema: { ...doc('Remove a member from a class', 'Invoices already sent stay as they are.'), params: MemberParams, response: { 200: Envelope(Type.Null()), ...errors(400, 401, 403, 404) } },
  }, async (req) => {
    await classes.removeMember(acc(req), req.params.id, req.params.memberId);
    return ok(req);
  });
}

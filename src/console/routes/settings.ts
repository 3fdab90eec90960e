import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bizRegNumProblem } from '../../gateway/index.js';
import type { App } from '../../platform/http.js';
import { hasErrors, textProblems, type FieldErrors } from '../field-errors.js';
import { Csrf, digits, FORM_BODY_LIMIT, Str, Text } from '../forms.js';
import { csrfToken, renderPage, seeOther, storeKey, userOf, type ConsoleDeps } from '../http.js';
import { processorSection, type ProcessorValues } from '../views/processor-settings.js';
import { settingsBody, type StoreValues } from '../views/settings.js';
import { processorSettingsRoutes, storeSettingsOf } from './processor-settings.js';

const NOTICES: Record<string, string> = { saved: '상점 정보를 저장했습니다.', processor: '결제 설정을 저장했습니다.', 'processor-reset': '운영자의 결제 설정으로 되돌렸습니다.' };
const AUDIT_PAGE = 50;

/** The store's details as the owner may change them: every problem at once, in Korean, per field. */
export function storeProblems(v: StoreValues): FieldErrors {
  const e = textProblems(v, {
    name: { label: '상점 이름', max: 60, required: '상점 이름을 적어 주세요 (결제 화면과 알림에 보입니다).' },
    ceoName: { label: '대표자', max: 30 },
    bizRegNum: { label: '사업자등록번호', max: 12 },
    tel: { label: '전화번호', max: 14 },
  });
  const biz = v.bizRegNum?.trim() ?? '';
  if (!e.bizRegNum && biz && bizRegNumProblem(biz)) e.bizRegNum = '올바른 사업자등록번호가 아닙니다 (10자리, 마지막 자리는 검증 숫자).';
  const tel = digits(v.tel);
  if (!e.tel && tel && !/^\d{8,12}$/.test(tel)) e.tel = '전화번호는 8~12자리 숫자여야 합니다 (예: 02-123-4567).';
  return e;
}

/** Settings (docs/console.md, "Settings and audit"), for owners: the store's details and the audit log. */
export function settingsRoutes(app: App, deps: ConsoleDeps): void {
  const show = async (req: FastifyRequest, reply: FastifyReply, q: { before?: string; notice?: string }, form?: { values: StoreValues; errors: FieldErrors }, proc?: { values: ProcessorValues; errors: FieldErrors }) => {
    const user = userOf(req);
    const store = (await deps.payments.store(storeKey(user))) ?? user.store;
    const before = q.before && /^\d{1,15}$/.test(q.before) ? Number(q.before) : undefined;
    const audit = await deps.audit.page(user.tenant.id, before, AUDIT_PAGE);
    const csrf = await csrfToken(req, reply);
    const processors = deps.settings.live ? (['toss', 'portone'] as const) : (['sandbox', 'toss', 'portone'] as const);
    const body = settingsBody({
      store, values: form?.values, errors: form?.errors, csrf, audit: audit.rows,
      nextHref: audit.next ? `/console/settings?before=${audit.next}` : null, firstHref: before ? '/console/settings' : null,
      processor: processorSection({ view: await storeSettingsOf(deps, store.code), processors: [...processors], csrf, values: proc?.values, errors: proc?.errors }),
    });
    return renderPage(req, reply, { title: '설정', active: 'settings', body, notice: NOTICES[q.notice ?? ''] }, form || proc ? 400 : 200);
  };

  app.get('/settings', { schema: { hide: true, querystring: Type.Object({ before: Str(20), notice: Str(20) }) } }, async (req, reply) => show(req, reply, req.query));

  app.post('/settings/store', {
    bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, body: Type.Object({ ...Csrf, name: Text(), ceoName: Text(), bizRegNum: Text(), tel: Text() }) },
  }, async (req, reply) => {
    const user = userOf(req);
    const v = req.body;
    const errors = storeProblems(v);
    if (hasErrors(errors)) return show(req, reply, {}, { values: v, errors });
    const set = { name: v.name!.trim(), ceoName: v.ceoName?.trim() ?? '', bizRegNum: (v.bizRegNum ?? '').replace(/-/g, '').trim(), tel: digits(v.tel) };
    await deps.payments.updateStore(storeKey(user), set);
    await deps.audit.record(user, req.ip, 'store.update', user.store.code, `${set.name} / ${set.ceoName} / ${set.bizRegNum} / ${set.tel}`);
    return seeOther(reply, '/console/settings?notice=saved');
  });

  processorSettingsRoutes(app, deps, (req, reply, proc) => show(req, reply, {}, undefined, proc));
}

import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { resetSettings, setSettings, SettingsProblem, viewSettings, type SettingsField } from '../../gateway/index.js';
import type { App } from '../../platform/http.js';
import type { CheckoutProcessorId, PayMethod, PayWay } from '../../ports/checkout.js';
import { Csrf, FORM_BODY_LIMIT, Text } from '../forms.js';
import { seeOther, userOf, type ConsoleDeps } from '../http.js';
import type { ProcessorValues } from '../views/processor-settings.js';


/** Korean words for each field's problem (the service names them in English). */
export const FIELD_PROBLEM: Record<SettingsField, string> = {
  processor: '결제사를 목록에서 골라 주세요. 실제 결제(운영 모드)에는 샌드박스를 쓸 수 없습니다.',
  way: '카드번호 입력(키인)은 샌드박스와 토스페이먼츠에서만 쓸 수 있습니다.',
  methods: '결제수단을 하나 이상 골라 주세요.',
  clientKey: '토스페이먼츠 API 개별 연동의 클라이언트 키(test_ck_… 또는 live_ck_…)를 넣어 주세요.',
  secretKey: '같은 쌍의 시크릿 키(test_sk_… 또는 live_sk_…)를 넣어 주세요. 클라이언트 키와 test/live가 같아야 합니다.',
  apiSecret: '포트원 V2 API 시크릿을 넣어 주세요.',
  storeId: '포트원 상점 아이디(store-…)를 넣어 주세요.',
  channelKey: '포트원 채널 키(channel-key-…)를 넣어 주세요.',
  webhookSecret: '포트원 웹훅 시크릿(whsec_…)을 넣어 주세요.',
};

// Generous limits: what the settings refuse comes back beside its field (FIELD_PROBLEM), never as a bare error page.
const Body = Type.Object({
  ...Csrf, processor: Text(), way: Text(), methods: Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Array(Type.String({ maxLength: 10_000 }), { maxItems: 50 })])),
  clientKey: Text(), secretKey: Text(), apiSecret: Text(), storeId: Text(), channelKey: Text(), webhookSecret: Text(),
});

/**
 * The store's processor settings in the console (docs/console.md, "Settings"), for owners: the
 * same rules as `sunap store set-processor`; secrets are typed, sealed and never shown again.
 */
export function processorSettingsRoutes(app: App, deps: ConsoleDeps, show: (req: FastifyRequest, reply: FastifyReply, form?: { values: ProcessorValues; errors: Record<string, string> }) => Promise<FastifyReply>): void {
  app.post('/settings/processor', { bodyLimit: FORM_BODY_LIMIT, schema: { hide: true, body: Body } }, async (req, reply) => {
    const user = userOf(req);
    const b = req.body;
    const methods = (b.methods === undefined ? [] : Array.isArray(b.methods) ? b.methods : [b.methods]) as PayMethod[];
    const keys = { clientKey: b.clientKey?.trim(), secretKey: b.secretKey?.trim(), apiSecret: b.apiSecret?.trim(), storeId: b.storeId?.trim(), channelKey: b.channelKey?.trim(), webhookSecret: b.webhookSecret?.trim() };
    try {
      const v = await setSettings(deps.settings, user.store.code, { processor: b.processor as CheckoutProcessorId, way: b.way as PayWay, methods, keys }, deps.clock.nowMs());
      const secrets = v.keys.flatMap((k) => k.secretsSet.map((s) => `${k.processor}.${s}`));
      // Secrets are named in the audit log, never written there.
      await deps.audit.record(user, req.ip, 'store.processor', user.store.code, `${v.processor} / ${v.way} / ${v.methods.join(',')} / secrets set: ${secrets.join(',') || '-'}`);
      return seeOther(reply, '/console/settings?notice=processor');
    } catch (err) {
      if (!(err instanceof SettingsProblem)) throw err;
      const errors = Object.fromEntries(Object.keys(err.problems).map((f) => [f, FIELD_PROBLEM[f as SettingsField]]));
      return show(req, reply, { values: { processor: b.processor, way: b.way, methods, clientKey: b.clientKey, storeId: b.storeId, channelKey: b.channelKey }, errors });
    }
  });

  app.post('/settings/processor/reset', { schema: { hide: true, body: Type.Object({ ...Csrf }) } }, async (req, reply) => {
    const user = userOf(req);
    const v = await resetSettings(deps.settings, user.store.code);
    await deps.audit.record(user, req.ip, 'store.processor_reset', user.store.code, `${v.processor} / ${v.way}`);
    return seeOther(reply, '/console/settings?notice=processor-reset');
  });
}

/** The settings view of the signed-in owner's store. */
export function storeSettingsOf(deps: ConsoleDeps, storeCode: string) {
  return viewSettings(deps.settings, storeCode);
}

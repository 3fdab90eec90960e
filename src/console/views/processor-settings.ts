import type { SettingsView } from '../../gateway/index.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { PAY_METHODS, type CheckoutProcessorId, type PayMethod } from '../../ports/checkout.js';
import type { FieldErrors } from '../field-errors.js';
import { describedBy, problem, summary } from './form-fields.js';
import { csrfField } from './shell.js';

/** The processor settings' words (docs/console.md, "Settings"). */
export const PROCESSOR_LABEL: Record<CheckoutProcessorId, string> = { sandbox: '샌드박스 (테스트)', toss: '토스페이먼츠', portone: '포트원 (PortOne V2)' };
export const METHOD_WORDS: Record<PayMethod, string> = { CARD: '카드', EASY_PAY: '간편결제', TRANSFER: '계좌이체', VIRTUAL_ACCOUNT: '가상계좌', MOBILE_PHONE: '휴대폰' };

/** What the form sends back after an error (never a secret: those are typed again). */
export interface ProcessorValues {
  processor?: string;
  way?: string;
  methods?: string[];
  clientKey?: string;
  storeId?: string;
  channelKey?: string;
}

export function processorSection(v: { view: SettingsView; processors: CheckoutProcessorId[]; csrf: string; values?: ProcessorValues; errors?: FieldErrors }): SafeHtml {
  const cur = v.view;
  const x: ProcessorValues = v.values ?? {
    processor: cur.processor, way: cur.way, methods: cur.methods,
    clientKey: cur.keys.find((k) => k.processor === 'toss')?.clientKey, storeId: cur.keys.find((k) => k.processor === 'portone')?.storeId,
    channelKey: cur.keys.find((k) => k.processor === 'portone')?.channelKey,
  };
  const e = v.errors ?? {};
  const secretSet = (p: CheckoutProcessorId, f: string) => !!cur.keys.find((k) => k.processor === p)?.secretsSet.includes(f);
  const err = (id: string) => problem(id, e);
  const aria = (id: string, hint: boolean) => describedBy(id, e, hint ? `${id}-hint` : undefined);
  const text = (id: keyof ProcessorValues, label: string, hint: string) => html`<div class="field"><label for="${id}">${label}</label>
<input id="${id}" name="${id}" value="${(x[id] as string | undefined) ?? ''}" autocomplete="off" spellcheck="false" maxlength="300"${aria(id, true)}>
${err(id)}<span class="hint" id="${id}-hint">${hint}</span></div>`;
  const secret = (id: string, label: string, p: CheckoutProcessorId) => html`<div class="field"><label for="${id}">${label}</label>
<input id="${id}" name="${id}" type="password" value="" autocomplete="new-password" spellcheck="false" maxlength="500"${aria(id, true)}>
${err(id)}<span class="hint" id="${id}-hint">${secretSet(p, id) ? '저장되어 있습니다. 바꿀 때만 입력하세요. 저장된 값은 다시 보여 주지 않습니다.' : '아직 없습니다. 입력하면 암호화해 저장하고 다시 보여 주지 않습니다.'}</span></div>`;
  return html`<form method="post" action="/console/settings/processor" class="card" aria-labelledby="processor-title" novalidate>
${csrfField(v.csrf)}
<h2 id="processor-title">결제 설정</h2>
<p class="muted">${cur.source === 'store' ? '이 상점의 결제사 설정입니다.' : '아직 이 상점만의 설정이 없어 운영자의 결제사 설정으로 결제를 받습니다.'} 지금: ${PROCESSOR_LABEL[cur.processor]} · ${cur.way === 'key-in' ? '카드번호 입력 (키인)' : '결제사 결제창'} · ${cur.methods.map((m) => METHOD_WORDS[m]).join(', ')}</p>
${summary(e)}
<div class="field"><label for="processor">결제사</label><select id="processor" name="processor"${aria('processor', false)}>
${v.processors.map((p) => html`<option value="${p}"${x.processor === p ? html` selected` : ''}>${PROCESSOR_LABEL[p]}</option>`)}</select>${err('processor')}</div>
<fieldset id="way"${e.way ? html` aria-describedby="way-error"` : ''}><legend>카드 받는 방법</legend>
<label><input type="radio" name="way" value="checkout"${x.way !== 'key-in' ? html` checked` : ''}> 결제사 결제창 (일반 계약, 카드 정보가 상점과 Sunap을 거치지 않습니다)</label>
<label><input type="radio" name="way" value="key-in"${x.way === 'key-in' ? html` checked` : ''}> 카드번호 입력 (키인, 결제사의 별도 심사·계약이 필요합니다)</label>${err('way')}
</fieldset>
<fieldset id="methods"${e.methods ? html` aria-describedby="methods-error"` : ''}><legend>결제 페이지에 보일 결제수단</legend>
${PAY_METHODS.map((m) => html`<label><input type="checkbox" name="methods" value="${m}"${x.methods?.includes(m) ? html` checked` : ''}> ${METHOD_WORDS[m]}</label>`)}${err('methods')}
</fieldset>
<h3>토스페이먼츠 키</h3>
<p class="muted">토스페이먼츠 개발자센터 → API 키의 <strong>API 개별 연동 키</strong>(클라이언트 키와 시크릿 키 한 쌍)를 넣으세요. 결제위젯 연동 키는 쓰지 않습니다.</p>
<div class="grid2">${text('clientKey', '클라이언트 키', 'test_ck_… 또는 live_ck_…')}${secret('secretKey', '시크릿 키', 'toss')}</div>
<h3>포트원 키</h3>
<div class="grid2">${text('storeId', '상점 아이디', 'store-…')}${text('channelKey', '채널 키', 'channel-key-…')}${secret('apiSecret', 'V2 API 시크릿', 'portone')}${secret('webhookSecret', '웹훅 시크릿', 'portone')}</div>
<button class="btn" type="submit">결제 설정 저장</button>
</form>
${cur.source === 'store' ? html`<form method="post" action="/console/settings/processor/reset" class="card">${csrfField(v.csrf)}
<p>이 상점만의 결제 설정과 키를 지우고 운영자의 결제사 설정으로 돌아갑니다. 이미 받은 결제는 받은 결제사로 취소·조회됩니다.</p>
<button class="btn secondary" type="submit">운영자 설정으로 되돌리기</button></form>` : ''}`;
}

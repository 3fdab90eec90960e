import type { TestApp } from '../helpers/app.js';
import { paymentBody } from '../helpers/app.js';
import { eventually } from '../helpers/wait.js';
import { billBody, createOne, waitSent, type Login } from '../invoicing/support.js';

/** An invoice with a webhookUrl, sent and paid through the sandbox: its bill.paid webhook is owed. */
export async function paidInvoice(t: TestApp, a: Login, webhookUrl: string, webhookSecret?: string, storeCode = t.storeCode): Promise<{ billId: string; transSeqNo: string }> {
  const billId = await createOne(t, a, { ...billBody(), webhookUrl, ...(webhookSecret ? { webhookSecret } : {}) });
  const d = await waitSent(t, a, billId);
  const paid = await t.pay(d.bill.transSeqNo, undefined, storeCode);
  if (!paid.approved) throw new Error(`payment not approved: ${JSON.stringify(paid)}`);
  return { billId, transSeqNo: d.bill.transSeqNo };
}

/** A gateway payment with CONFIRM_URL, approved through the sandbox: its callback is owed. */
export async function approvedPayment(t: TestApp, confirmUrl: string, storeCode = t.storeCode): Promise<string> {
  const body = paymentBody({ CONFIRM_URL: confirmUrl });
  const r = await t.gw('requestPayment', { ...body, STORE_CODE: storeCode });
  if (r.body?.result_data?.RESULT_CODE !== '0000') throw new Error(`requestPayment: ${JSON.stringify(r.body)}`);
  const paid = await t.pay(String(body.TRANS_SEQNO), undefined, storeCode);
  if (!paid.approved) throw new Error(`payment not approved: ${JSON.stringify(paid)}`);
  return String(body.TRANS_SEQNO);
}

/** Waits until no job is due on the service clock (every due attempt has run and been settled). */
export async function settled(t: TestApp): Promise<void> {
  const db = t.app.sunap.database.db;
  await eventually(async () => {
    const now = t.app.sunap.clock.nowMs();
    const due = await db.selectFrom('jobs').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'PENDING').where('run_at', '<=', now).executeTakeFirstOrThrow();
    return Number(due.n) === 0;
  }, 'no due job left', 30_000);
}

/** A fresh access token for the account (after the sandbox clock outlived the first). */
export async function relogin(t: TestApp, a: Login): Promise<Record<string, string>> {
  const r = await t.post('/app/v1/auth/login', { email: a.email, password: a.password, loginType: 'EMAIL' });
  return { 'x-access-token': r.body.result_data.accessToken };
}

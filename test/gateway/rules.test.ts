import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { breakdown, DEFAULT_VAT_BPS, lineNet, MAX_LINE_AMOUNT, vatOf } from '../../src/gateway/amounts.js';
import { installmentProblem, INSTALLMENT_MIN_AMOUNT } from '../../src/gateway/installments.js';
import { parseStoredLines, storedLine, storeLines } from '../../src/gateway/items.js';
import type { Payment } from '../../src/gateway/repository.js';
import { returnUrlFor } from '../../src/gateway/views.js';
import {
  accountGuard, alreadyApplied, canApply, isTerminalPayPath, PAY_PATHS, PAYMENT_STATES, PAYMENT_TRANSITIONS, type PaymentEvent, type PaymentState,
} from '../../src/gateway/payment-state.js';

/**
 * The gateway's rules of money and state, each on both sides of its boundary, without a server:
 * a broken rule shows here in milliseconds (the HTTP suites prove the same rules end to end).
 */

describe('line net (unitPrice × qty − discount)', () => {
  test('AMOUNT discounts subtract won; qty defaults to 1', () => {
    assert.equal(lineNet({ unitPrice: 1000 }), 1000);
    assert.equal(lineNet({ unitPrice: 1000, qty: 3 }), 3000);
    assert.equal(lineNet({ unitPrice: 1000, qty: 3, discountAmount: 500 }), 2500);
    assert.equal(lineNet({ unitPrice: 1000, qty: 3, discountAmount: 500, discountUnit: 'AMOUNT' }), 2500);
  });

  test('RATE discounts are floored percent of the line; 100 is the most, 101 is refused', () => {
    assert.equal(lineNet({ unitPrice: 999, qty: 1, discountAmount: 10, discountUnit: 'RATE' }), 900, '99.9 off is floored to 99');
    assert.equal(lineNet({ unitPrice: 1000, qty: 3, discountAmount: 33, discountUnit: 'RATE' }), 2010);
    assert.equal(lineNet({ unitPrice: 1000, discountAmount: 100, discountUnit: 'RATE' }), 0);
    assert.deepEqual(lineNet({ unitPrice: 1000, discountAmount: 101, discountUnit: 'RATE' }), { field: 'discountAmount', reason: 'a RATE discount must be at most 100' });
  });

  test('a discount may equal the line but not exceed it', () => {
    assert.equal(lineNet({ unitPrice: 1000, qty: 2, discountAmount: 2000 }), 0);
    assert.deepEqual(lineNet({ unitPrice: 1000, qty: 2, discountAmount: 2001 }), { field: 'discountAmount', reason: 'is larger than the line amount' });
  });

  test('a line may reach 12 digits and no more', () => {
    assert.equal(lineNet({ unitPrice: MAX_LINE_AMOUNT }), MAX_LINE_AMOUNT);
    assert.equal(lineNet({ unitPrice: 333_333_333_333, qty: 3 }), 999_999_999_999);
    assert.deepEqual(lineNet({ unitPrice: 500_000_000_000, qty: 2 }), { field: 'qty', reason: 'the line amount is too large' });
    assert.equal(lineNet({ unitPrice: 500_000_000_000, qty: 2, discountAmount: 1 }), MAX_LINE_AMOUNT, 'the net, not the gross, is bounded');
  });

  test('property: the net is never negative and never above the gross', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 0, max: 100 }), fc.boolean(),
      (unitPrice, qty, d, rate) => {
        const net = lineNet({ unitPrice, qty, discountAmount: rate ? d : Math.min(d * 1000, unitPrice * qty), discountUnit: rate ? 'RATE' : 'AMOUNT' });
        assert.equal(typeof net, 'number');
        assert.ok((net as number) >= 0 && (net as number) <= unitPrice * qty);
      },
    ));
  });
});

describe('VAT and the supply/tax/tax-free split', () => {
  test('VAT inside an amount rounds half up at the default 10%', () => {
    assert.equal(DEFAULT_VAT_BPS, 1000);
    assert.equal(vatOf(11000, 1000), 1000);
    assert.equal(vatOf(128000, 1000), 11636, '11,636.36… rounds down');
    assert.equal(vatOf(16500, 1000), 1500);
    assert.equal(vatOf(5, 1000), 0, '0.45 rounds down');
    assert.equal(vatOf(6, 1000), 1, '0.545… rounds up');
    assert.equal(vatOf(1000, 0), 0, 'a 0% line carries no VAT');
    assert.equal(vatOf(10500, 500), 500, '5%');
  });

  test('without items the whole amount is one taxed line', () => {
    assert.deepEqual(breakdown(128000, undefined), { supplyAmount: 116364, taxCharge: 11636, taxFreeAmount: 0, lines: [] });
    assert.deepEqual(breakdown(128000, []), { supplyAmount: 116364, taxCharge: 11636, taxFreeAmount: 0, lines: [] });
  });

  test('taxed, tax-free and 0% lines add up to the amount', () => {
    const r = breakdown(30000, [
      { unitPrice: 11000 },
      { unitPrice: 9000, taxType: 'TAX_FREE' },
      { unitPrice: 10000, vatRateBps: 0, taxType: 'TAX_ON' },
    ]);
    assert.deepEqual(r, { supplyAmount: 20000, taxCharge: 1000, taxFreeAmount: 9000, lines: [11000, 9000, 10000] });
  });

  test('the items must add up to the amount exactly (one won off either way is refused)', () => {
    const items = [{ unitPrice: 5000, qty: 2 }];
    assert.ok(!('error' in breakdown(10000, items)));
    assert.deepEqual(breakdown(9999, items), { error: 'APPROVAL_AMOUNT: must equal the sum of ITEMS (10000)' });
    assert.deepEqual(breakdown(10001, items), { error: 'APPROVAL_AMOUNT: must equal the sum of ITEMS (10000)' });
  });

  test('a line problem names the item by its index', () => {
    assert.deepEqual(breakdown(1000, [{ unitPrice: 1000 }, { unitPrice: 10, discountAmount: 101, discountUnit: 'RATE' }]), { error: 'ITEMS[1].discountAmount: a RATE discount must be at most 100' });
  });

  test('property: supply + VAT + tax-free = amount, and VAT is never above a tenth of the taxed part', () => {
    fc.assert(fc.property(fc.array(fc.record({ unitPrice: fc.integer({ min: 0, max: 5_000_000 }), free: fc.boolean(), bps: fc.integer({ min: 0, max: 10_000 }) }), { minLength: 1, maxLength: 8 }), (lines) => {
      const items = lines.map((l) => ({ unitPrice: l.unitPrice, taxType: l.free ? 'TAX_FREE' as const : 'TAX_ON' as const, vatRateBps: l.bps }));
      const amount = lines.reduce((s, l) => s + l.unitPrice, 0);
      const r = breakdown(amount, items);
      assert.ok(!('error' in r));
      if ('error' in r) return;
      assert.equal(r.supplyAmount + r.taxCharge + r.taxFreeAmount, amount);
      assert.equal(r.taxFreeAmount, lines.filter((l) => l.free).reduce((s, l) => s + l.unitPrice, 0));
      assert.ok(r.taxCharge * 2 <= amount - r.taxFreeAmount + 2 * items.length, 'at most half of the taxed part even at 100% VAT');
    }));
  });
});

describe('installments', () => {
  test('a lump sum always; 2 to 12 months from 50,000 won', () => {
    assert.equal(INSTALLMENT_MIN_AMOUNT, 50_000);
    assert.equal(installmentProblem('00', 1), null);
    assert.equal(installmentProblem('02', 50_000), null);
    assert.equal(installmentProblem('12', 50_000), null);
    assert.equal(installmentProblem('02', 49_999), 'below-minimum');
    assert.equal(installmentProblem('12', 49_999), 'below-minimum');
    for (const bad of ['01', '13', '1', '2', '', '0', '99', ' 2']) assert.equal(installmentProblem(bad, 1_000_000), 'unknown', bad);
  });
});

describe('stored item lines', () => {
  test('what is stored is read back the same', () => {
    const lines = [
      storedLine({ name: '피아노', unitPrice: 100000, qty: 1, net: 100000 }),
      storedLine({ name: '교재', unitPrice: 14000, qty: 2, discountAmount: 10, discountUnit: 'RATE', net: 25200, taxType: 'TAX_FREE', vatRateBps: 0, publisher: '출판사', imageUrl: 'https://img.example/1.png', type: '교재' }),
    ];
    assert.deepEqual(parseStoredLines(storeLines(lines)), lines);
  });

  test('defaults of a line, and no lines stored as null', () => {
    assert.deepEqual(storedLine({ name: 'a', unitPrice: 1, net: 1 }), {
      name: 'a', unitPrice: 1, qty: 1, discountAmount: 0, discountUnit: 'AMOUNT', net: 1, taxType: null, vatRateBps: null, publisher: null, imageUrl: null, type: null,
    });
    assert.equal(storeLines([]), null);
    assert.deepEqual(parseStoredLines(null), []);
  });

  test('rows written before this shape: a payment\'s request fields with net, an invoice\'s price and amount', () => {
    const payment = JSON.stringify([{ name: '책', unitPrice: 15000, qty: 2, discountAmount: 1000, net: 29000, publisher: '출판사' }]);
    assert.deepEqual(parseStoredLines(payment)[0], storedLine({ name: '책', unitPrice: 15000, qty: 2, discountAmount: 1000, net: 29000, publisher: '출판사' }));
    const invoice = JSON.stringify([{ name: '수강료', price: 100000, qty: 1, discountAmount: 10, discountUnit: 'RATE', type: null, amount: 90000 }]);
    assert.deepEqual(parseStoredLines(invoice)[0], storedLine({ name: '수강료', unitPrice: 100000, qty: 1, discountAmount: 10, discountUnit: 'RATE', net: 90000 }));
    assert.equal(parseStoredLines(JSON.stringify([{ name: 'x', price: 700, qty: 3 }]))[0]!.net, 2100, 'no stored net: unit × qty');
  });

  test('unreadable JSON or entries are left out, never an error', () => {
    assert.deepEqual(parseStoredLines('not json'), []);
    assert.deepEqual(parseStoredLines('{"name":"x"}'), []);
    assert.deepEqual(parseStoredLines(JSON.stringify([null, 3, { name: 1, unitPrice: 1 }, { name: 'ok', unitPrice: 'x' }, { name: 'ok', unitPrice: 5, qty: 'x' }])), []);
    const one = parseStoredLines(JSON.stringify([{ name: 'ok', unitPrice: 5, qty: null, discountUnit: 'PERCENT', taxType: 'OTHER', publisher: '' }]));
    assert.deepEqual(one, [storedLine({ name: 'ok', unitPrice: 5, net: 5 })]);
  });
  test('each field read on its own terms: qty absent is 1, both tax types kept, a non-string text is none', () => {
    const [a, b] = parseStoredLines(JSON.stringify([
      { name: '무게 없음', unitPrice: 300 },
      { name: '과세', unitPrice: 100, qty: 2, taxType: 'TAX_ON', vatRateBps: 0, publisher: 5, imageUrl: false, type: ['x'] },
    ]));
    assert.deepEqual(a, storedLine({ name: '무게 없음', unitPrice: 300, qty: 1, net: 300 }));
    assert.deepEqual(b, storedLine({ name: '과세', unitPrice: 100, qty: 2, net: 200, taxType: 'TAX_ON', vatRateBps: 0 }));
    assert.equal(parseStoredLines(JSON.stringify([{ name: 'n', unitPrice: 1, net: 'x', amount: 7 }]))[0]!.net, 7, 'a net that is not a number falls back to amount');
  });
});

describe('the payment state machine', () => {
  const events = Object.keys(PAYMENT_TRANSITIONS) as PaymentEvent[];
  /** Every move the gateway may make, as (event, from) → to; anything else is not a move. */
  const expected: Record<PaymentEvent, Partial<Record<PaymentState, PaymentState>>> = {
    approve: { STORE_REQUEST: 'APPROVE_COMPLETE' },
    issueAccount: { STORE_REQUEST: 'STORE_REQUEST' },
    deposit: { STORE_REQUEST: 'APPROVE_COMPLETE' },
    closeAccount: { STORE_REQUEST: 'STORE_REQUEST' },
    cancel: { APPROVE_COMPLETE: 'CANCEL_COMPLETE', CANCEL_FAIL: 'CANCEL_COMPLETE' },
    cancelFail: { APPROVE_COMPLETE: 'CANCEL_FAIL', CANCEL_FAIL: 'CANCEL_FAIL' },
    delete: { STORE_REQUEST: 'STORE_DELETE' },
  };
  /** The events that need a virtual account open (open) or none (none) on the waiting payment. */
  const account: Partial<Record<PaymentEvent, 'none' | 'open'>> = { approve: 'none', issueAccount: 'none', deposit: 'open', closeAccount: 'open', delete: 'none' };

  test('every state, event and account: allowed exactly where the table says, and to where it says', () => {
    assert.deepEqual(events.sort(), ['approve', 'cancel', 'cancelFail', 'closeAccount', 'delete', 'deposit', 'issueAccount']);
    for (const event of events) {
      assert.equal(accountGuard(event), account[event], `${event}'s account guard`);
      for (const state of PAYMENT_STATES) {
        const to = expected[event][state];
        for (const open of [false, true]) {
          const allowed = to !== undefined && (account[event] === undefined || account[event] === (open ? 'open' : 'none'));
          assert.equal(canApply(event, state, open), allowed, `${event} from ${state}, account ${open ? 'open' : 'none'}`);
        }
        assert.equal(canApply(event, state), to !== undefined && account[event] !== 'open', `${event} from ${state} without the account argument`);
        if (to) assert.equal(PAYMENT_TRANSITIONS[event].to, to);
      }
    }
  });

  test('an event is already applied only in its target state, and never when it keeps the payment where it was', () => {
    for (const event of events) {
      const t = PAYMENT_TRANSITIONS[event];
      for (const state of PAYMENT_STATES) {
        assert.equal(alreadyApplied(event, state), t.to === state && !(t.from as readonly string[]).includes(state), `${event} in ${state}`);
      }
    }
    assert.equal(alreadyApplied('issueAccount', 'STORE_REQUEST'), false);
    assert.equal(alreadyApplied('closeAccount', 'STORE_REQUEST'), false);
    assert.equal(alreadyApplied('delete', 'STORE_DELETE'), true);
    assert.equal(alreadyApplied('cancel', 'CANCEL_COMPLETE'), true);
  });

  test('terminal pay paths are KIOSK, VAN and CARD; WEB and EPAY are not', () => {
    assert.deepEqual(PAY_PATHS.filter(isTerminalPayPath), ['KIOSK', 'VAN', 'CARD']);
  });
});

describe('RETURN_URL after an approval (returnUrlFor)', () => {
  const base = { return_display_yn: 'Y', return_url: 'https://shop.example.com/done?order=1', trans_seqno: 'ORDER-1', amount: 5000, temp_value: null } as unknown as Payment;

  test('the five parameters are appended to the merchant\'s own query; TEMP_VALUE empty when none was sent', () => {
    const u = new URL(returnUrlFor(base, '0000', '승인되었습니다')!);
    assert.equal(u.origin + u.pathname, 'https://shop.example.com/done');
    assert.deepEqual([...u.searchParams], [['order', '1'], ['RESULT_CODE', '0000'], ['RESULT_MSG', '승인되었습니다'], ['TRANS_SEQNO', 'ORDER-1'], ['APPROVAL_AMOUNT', '5000'], ['TEMP_VALUE', '']]);
    assert.equal(new URL(returnUrlFor({ ...base, temp_value: 'cart-7' }, '0000', 'ok')!).searchParams.get('TEMP_VALUE'), 'cart-7');
  });

  test('no redirect unless RETURN_DISPLAY_YN is Y and a RETURN_URL was given', () => {
    assert.equal(returnUrlFor({ ...base, return_display_yn: 'N' }, '0000', 'ok'), null);
    assert.equal(returnUrlFor({ ...base, return_url: null }, '0000', 'ok'), null);
    assert.equal(returnUrlFor({ ...base, return_display_yn: 'N', return_url: null }, '0000', 'ok'), null);
  });
});

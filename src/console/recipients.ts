import { parse } from 'csv-parse';
import type { BillItem } from '../invoicing/index.js';
import { CSV_LIMITS, TOO_LARGE, yieldTurn } from './csv-upload.js';
import { digits, wholeNumber } from './forms.js';

/**
 * Recipients from a CSV, pasted or uploaded (docs/console.md, "Sending to many"): one row per
 * recipient with 이름, 전화번호, 금액 and optionally 보호자 전화번호, 항목 and 면세금액. A first row of
 * column names is recognized (Korean or English) and may put the columns in any order; without
 * one they are taken in that order. 항목 is `name:price[:qty]` entries separated by `;`, and
 * must add up to the amount. Cells are separated by commas or tabs (a sheet copied from Excel
 * pastes as tabs). Every row is checked; problems are said per row, in Korean.
 */
export const MAX_RECIPIENTS = CSV_LIMITS.rows;

/** Characters handed to the CSV parser per turn of the event loop. */
export const PARSE_SLICE = 16 * 1024;

export interface RecipientRow {
  line: number;
  name: string;
  phone: string;
  guardianPhone: string | null;
  /** null: take the template's amount. */
  amount: number | null;
  items: BillItem[] | null;
  /** 면세 금액 (the invoice's taxFreeAmount); null: none (all taxed). */
  taxFree: number | null;
  errors: string[];
}

type Key = 'name' | 'phone' | 'amount' | 'guardian' | 'items' | 'taxFree';
const HEADERS: Record<string, Key> = {
  이름: 'name', name: 'name', studentname: 'name', 받는분: 'name',
  전화번호: 'phone', 휴대폰: 'phone', 휴대폰번호: 'phone', phone: 'phone', studentphone: 'phone',
  금액: 'amount', amount: 'amount', 청구금액: 'amount',
  보호자전화번호: 'guardian', 보호자: 'guardian', guardianphone: 'guardian', guardian: 'guardian',
  항목: 'items', items: 'items', 청구항목: 'items',
  면세금액: 'taxFree', 면세: 'taxFree', taxfreeamount: 'taxFree', taxfree: 'taxFree',
};
// 면세금액 is read only under its header: a sixth column without one was always ignored, and stays so.
const POSITIONAL: Key[] = ['name', 'phone', 'amount', 'guardian', 'items'];

/** `name:price[:qty]; ...` (the 항목 cell, and the items field of the forms). */
export function parseItems(cell: string): { items: BillItem[] } | { error: string } {
  const items: BillItem[] = [];
  for (const part of cell.split(';').map((s) => s.trim()).filter(Boolean)) {
    const [name, price, qty] = part.split(':').map((s) => s.trim());
    const p = wholeNumber(price);
    const q = qty === undefined || qty === '' ? 1 : wholeNumber(qty);
    if (!name || name.length > 20) return { error: `항목 "${part}": 이름은 1~20자여야 합니다` };
    if (p === undefined || p < 100) return { error: `항목 "${part}": 가격은 100원 이상의 숫자여야 합니다 (이름:가격[:수량])` };
    if (q === undefined || q < 1 || q > 100_000) return { error: `항목 "${part}": 수량은 1 이상의 숫자여야 합니다` };
    items.push({ name, price: p, qty: q });
  }
  if (items.length === 0) return { error: '항목: 비어 있습니다' };
  if (items.length > 100) return { error: '항목: 100개까지입니다' };
  return { items };
}

/**
 * The records of the text, parsed a slice per turn of the event loop (csv-parse's streaming
 * parser); reading stops at `maxRecords + 1` records, so a file of many rows is refused at the
 * first row past the limit, not after reading all of it.
 */
async function readRecords(text: string, maxRecords: number): Promise<{ records: string[][] } | { error: string }> {
  const parser = parse({ bom: true, skip_empty_lines: true, relax_column_count: true, trim: true, delimiter: [',', '\t'] });
  const records: string[][] = [];
  let failure: Error | undefined;
  let ended = false;
  parser.on('data', (r: string[]) => records.push(r));
  parser.on('error', (err: Error) => { failure = err; });
  const done = new Promise<void>((resolve) => { parser.on('end', resolve); parser.on('error', () => resolve()); });
  parser.on('end', () => { ended = true; });
  for (let i = 0; i < text.length && !failure; i += PARSE_SLICE) {
    parser.write(text.slice(i, i + PARSE_SLICE));
    await yieldTurn();
    if (records.length > maxRecords) {
      parser.destroy();
      return { records: records.slice(0, maxRecords + 1) };
    }
  }
  if (!failure && !ended) {
    parser.end();
    await done;
  }
  if (failure) return { error: `CSV를 읽을 수 없습니다: ${failure.message.slice(0, 200)}` };
  return { records };
}

/** The rows of the CSV text, each with its problems; a problem of the whole text is `error`. */
export async function parseRecipients(text: string, opts: { templateAmount: number | null }): Promise<{ rows: RecipientRow[]; error?: string }> {
  if (Buffer.byteLength(text) > CSV_LIMITS.bytes) return { rows: [], error: TOO_LARGE };
  // One more record than the limit may be a header row.
  const read = await readRecords(text, MAX_RECIPIENTS + 1);
  if ('error' in read) return { rows: [], error: read.error };
  const records = read.records;
  if (records.length === 0) return { rows: [], error: '받는 분이 없습니다. 한 줄에 한 명씩 이름, 전화번호, 금액을 적어 주세요.' };
  let order = POSITIONAL;
  let start = 0;
  const head = records[0]!.map((c) => HEADERS[c.replace(/[\s_-]/g, '').toLowerCase()]);
  if (head[0] !== undefined || head.some((k) => k === 'phone')) {
    order = head.map((k) => k ?? ('' as Key));
    start = 1;
    const missing = (['name', 'phone'] as Key[]).filter((k) => !order.includes(k));
    if (missing.length) return { rows: [], error: `첫 줄의 열 이름에 ${missing.map((k) => (k === 'name' ? '이름' : '전화번호')).join(', ')}이(가) 없습니다` };
  }
  const body = records.slice(start);
  if (body.length > MAX_RECIPIENTS) return { rows: [], error: `한 번에 ${MAX_RECIPIENTS.toLocaleString('ko-KR')}명까지 보낼 수 있습니다. ${(MAX_RECIPIENTS + start + 1).toLocaleString('ko-KR')}번째 줄에서 읽기를 멈췄습니다. 나누어 올려 주세요.` };
  const seen = new Map<string, number>();
  const rows = body.map((cells, i): RecipientRow => {
    const get = (k: Key) => {
      const j = order.indexOf(k);
      return j >= 0 ? (cells[j] ?? '').trim() : '';
    };
    const line = i + start + 1;
    const errors: string[] = [];
    const name = get('name');
    const phone = digits(get('phone'));
    const guardianRaw = digits(get('guardian'));
    const amountRaw = get('amount');
    const amount = amountRaw === '' ? null : wholeNumber(amountRaw);
    if (!name || name.length > 30) errors.push('이름은 1~30자여야 합니다');
    if (!/^\d{10,11}$/.test(phone)) errors.push('전화번호는 10~11자리 숫자여야 합니다');
    if (guardianRaw && !/^\d{10,11}$/.test(guardianRaw)) errors.push('보호자 전화번호는 10~11자리 숫자여야 합니다');
    if (amount === undefined || (amount !== null && (amount < 100 || amount > 2_147_483_647))) errors.push('금액은 100원 이상의 숫자여야 합니다');
    if (amount === null && opts.templateAmount === null) errors.push('금액이 없습니다 (금액이 있는 템플릿을 고르거나 금액을 적어 주세요)');
    let items: BillItem[] | null = null;
    const itemsCell = get('items');
    if (itemsCell) {
      const r = parseItems(itemsCell);
      if ('error' in r) errors.push(r.error);
      else {
        items = r.items;
        const sum = items.reduce((s, it) => s + it.price * (it.qty ?? 1), 0);
        const want = amount ?? opts.templateAmount;
        if (want !== null && want !== undefined && sum !== want) errors.push(`항목 합계(${sum.toLocaleString('ko-KR')}원)가 금액(${want.toLocaleString('ko-KR')}원)과 다릅니다`);
      }
    }
    const taxFreeRaw = get('taxFree');
    const taxFree = taxFreeRaw === '' ? null : wholeNumber(taxFreeRaw);
    const whole = amount ?? opts.templateAmount;
    if (taxFree === undefined) errors.push('면세 금액은 숫자여야 합니다 (없으면 비워 두세요)');
    else if (taxFree !== null && whole !== null && whole !== undefined && taxFree > whole) {
      errors.push(`면세 금액(${taxFree.toLocaleString('ko-KR')}원)이 금액(${whole.toLocaleString('ko-KR')}원)보다 큽니다`);
    }
    const key = `${name}\u0000${phone}`;
    if (seen.has(key)) errors.push(`${seen.get(key)}행과 이름·전화번호가 같습니다 (한 사람에게 한 번만 보낼 수 있습니다)`);
    else seen.set(key, line);
    return { line, name, phone, guardianPhone: guardianRaw || null, amount: amount ?? null, items, taxFree: taxFree || null, errors };
  });
  return { rows };
}

/**
 * Korean banks: the standard (KFTC) three-digit code Sunap uses on the wire (REFUND_BANK_CODE)
 * and in its records, the name pages show, and each processor's own code for the same bank
 * (Toss Payments' two-digit codes, PortOne's enum names), so an adapter translates and the
 * interface stays one.
 */
export interface Bank {
  code: string;
  name: string;
  toss: string;
  portone: string;
}

export const BANKS: readonly Bank[] = [
  { code: '002', name: 'KDB산업은행', toss: '02', portone: 'KDB' },
  { code: '003', name: 'IBK기업은행', toss: '03', portone: 'IBK' },
  { code: '004', name: 'KB국민은행', toss: '06', portone: 'KOOKMIN' },
  { code: '007', name: 'Sh수협은행', toss: '07', portone: 'SUHYUP' },
  { code: '011', name: 'NH농협은행', toss: '11', portone: 'NONGHYUP' },
  { code: '012', name: '지역농축협', toss: '12', portone: 'LOCAL_NONGHYUP' },
  { code: '020', name: '우리은행', toss: '20', portone: 'WOORI' },
  { code: '023', name: 'SC제일은행', toss: '23', portone: 'STANDARD_CHARTERED' },
  { code: '027', name: '씨티은행', toss: '27', portone: 'CITI' },
  { code: '031', name: 'iM뱅크(대구)', toss: '31', portone: 'DAEGU' },
  { code: '032', name: '부산은행', toss: '32', portone: 'BUSAN' },
  { code: '034', name: '광주은행', toss: '34', portone: 'KWANGJU' },
  { code: '035', name: '제주은행', toss: '35', portone: 'JEJU' },
  { code: '037', name: '전북은행', toss: '37', portone: 'JEONBUK' },
  { code: '039', name: '경남은행', toss: '39', portone: 'KYONGNAM' },
  { code: '045', name: '새마을금고', toss: '45', portone: 'KFCC' },
  { code: '048', name: '신협', toss: '48', portone: 'SHINHYUP' },
  { code: '050', name: '저축은행', toss: '50', portone: 'SAVINGS_BANK' },
  { code: '071', name: '우체국', toss: '71', portone: 'POST' },
  { code: '081', name: '하나은행', toss: '81', portone: 'HANA' },
  { code: '088', name: '신한은행', toss: '88', portone: 'SHINHAN' },
  { code: '089', name: '케이뱅크', toss: '89', portone: 'K_BANK' },
  { code: '090', name: '카카오뱅크', toss: '90', portone: 'KAKAO' },
  { code: '092', name: '토스뱅크', toss: '92', portone: 'TOSS' },
];

const byCode = new Map(BANKS.map((b) => [b.code, b]));

export function bankByCode(code: string): Bank | undefined {
  return byCode.get(code);
}

/** A bank's name from its standard code; an unknown code still names something. */
export function bankName(code: string): string {
  return byCode.get(code)?.name ?? (code ? `은행(${code})` : '');
}

/** The bank of a Toss two-digit code (virtual accounts, transfers, refunds). */
export function bankOfToss(tossCode: string): Bank | undefined {
  return BANKS.find((b) => b.toss === tossCode);
}

/** The bank of a PortOne enum name. */
export function bankOfPortone(name: string): Bank | undefined {
  return BANKS.find((b) => b.portone === name);
}

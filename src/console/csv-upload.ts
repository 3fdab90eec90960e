import iconv from 'iconv-lite';

/**
 * Reading an uploaded CSV (docs/console.md, "Sending to many"): the bytes as Korean offices save
 * them. Excel's "CSV" is CP949 (EUC-KR's superset) with no BOM, "CSV UTF-8" is UTF-8 with a BOM,
 * "Unicode text" is UTF-16 LE with a BOM, and Google Sheets and Numbers write UTF-8 without one.
 * A BOM decides; without one, bytes that are valid UTF-8 are UTF-8 and anything else is read
 * as CP949. Text that still holds a replacement character (U+FFFD) or a NUL was not one of
 * those: it is refused, never previewed as fine.
 *
 * The work is done in slices with a turn of the event loop between them, so the largest
 * upload never holds up the other requests (docs/security.md, "CSV uploads").
 */

/** What one upload may hold: the bytes (checked while the multipart body streams in) and the rows. */
export const CSV_LIMITS = { bytes: 2 * 1024 * 1024, rows: 1000 } as const;

/** Bytes decoded per turn of the event loop (well under a millisecond each). */
export const DECODE_SLICE = 64 * 1024;

export type CsvEncoding = 'UTF-8' | 'UTF-8 (BOM)' | 'CP949' | 'UTF-16LE' | 'UTF-16BE';

/** How each encoding is named to the merchant on the preview. */
export const ENCODING_LABEL: Record<CsvEncoding, string> = {
  'UTF-8': 'UTF-8',
  'UTF-8 (BOM)': 'UTF-8 (엑셀 "CSV UTF-8")',
  CP949: 'CP949/EUC-KR (엑셀 기본 "CSV")',
  'UTF-16LE': 'UTF-16 (엑셀 "유니코드 텍스트")',
  'UTF-16BE': 'UTF-16 BE',
};

export const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The Korean refusal of a file over the byte limit (the multipart limit and the pasted text say the same). */
export const TOO_LARGE = `파일이 너무 큽니다. CSV는 ${CSV_LIMITS.bytes / 1024 / 1024}MB, 받는 분 ${CSV_LIMITS.rows.toLocaleString('ko-KR')}명까지 한 번에 올릴 수 있습니다. 나누어 올려 주세요.`;

function sniff(bytes: Buffer): { encoding: CsvEncoding; skip: number } | null {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { encoding: 'UTF-8 (BOM)', skip: 3 };
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: 'UTF-16LE', skip: 2 };
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: 'UTF-16BE', skip: 2 };
  return null;
}

/** Decodes all of `bytes` with iconv-lite's streaming decoder, a slice per turn. */
async function decodeWith(name: string, bytes: Buffer): Promise<string> {
  const decoder = iconv.getDecoder(name, { stripBOM: false });
  const out: string[] = [];
  for (let i = 0; i < bytes.length; i += DECODE_SLICE) {
    out.push(decoder.write(bytes.subarray(i, i + DECODE_SLICE)));
    await yieldTurn();
  }
  const tail = decoder.end();
  if (tail) out.push(tail);
  return out.join('');
}

/** UTF-8 or nothing: undefined at the first byte sequence that is not UTF-8. */
async function decodeUtf8(bytes: Buffer): Promise<string | undefined> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const out: string[] = [];
  try {
    for (let i = 0; i < bytes.length; i += DECODE_SLICE) {
      out.push(decoder.decode(bytes.subarray(i, i + DECODE_SLICE), { stream: true }));
      await yieldTurn();
    }
    out.push(decoder.decode());
  } catch {
    return undefined;
  }
  return out.join('');
}

/** The text of an uploaded file and the encoding it was read in, or a Korean refusal. */
export async function decodeCsv(bytes: Buffer): Promise<{ text: string; encoding: CsvEncoding } | { error: string }> {
  if (bytes.length > CSV_LIMITS.bytes) return { error: TOO_LARGE };
  const bom = sniff(bytes);
  let encoding: CsvEncoding;
  let text: string;
  if (bom) {
    encoding = bom.encoding;
    const body = bytes.subarray(bom.skip);
    text = bom.encoding === 'UTF-8 (BOM)' ? (await decodeUtf8(body)) ?? (await decodeWith('utf-8', body)) : await decodeWith(bom.encoding === 'UTF-16LE' ? 'utf-16le' : 'utf-16be', body);
  } else {
    const utf8 = await decodeUtf8(bytes);
    encoding = utf8 === undefined ? 'CP949' : 'UTF-8';
    text = utf8 ?? (await decodeWith('cp949', bytes));
  }
  if (text.includes('\uFFFD') || text.includes('\u0000')) {
    return { error: `파일의 글자를 읽을 수 없습니다 (${ENCODING_LABEL[encoding]}로 읽어 보았습니다). 엑셀에서 "CSV UTF-8" 또는 "CSV"로 다시 저장해 올려 주세요. 엑셀 통합 문서(.xlsx)는 올릴 수 없습니다.` };
  }
  return { text, encoding };
}

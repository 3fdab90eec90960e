import assert from 'node:assert/strict';
import type { ConsoleClient } from './support.js';
import { textOf } from './support.js';

/**
 * What every console form must show after a refused submit (docs/console.md, "Forms"): the
 * problem beside its field, tied to the input, the values as typed, no English of the API.
 */

const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&amp;/g, '&');

/** The Korean problem shown beside field `id` (asserting the input points to it and is marked invalid). */
export function problemOf(page: string, id: string): string {
  const m = new RegExp(`<span class="field-error" id="${id}-error">([^<]*)</span>`).exec(page);
  assert.ok(m, `a problem is shown beside ${id}`);
  const input = new RegExp(`<(input|select|textarea)[^>]*\\bid="${id}"[^>]*>`).exec(page)?.[0] ?? new RegExp(`<fieldset[^>]*aria-describedby="[^"]*${id}-error`).exec(page)?.[0];
  assert.ok(input, `field ${id} is on the page`);
  assert.match(input, new RegExp(`aria-describedby="[^"]*${id}-error`), `${id} is described by its problem`);
  if (!input.startsWith('<fieldset')) assert.match(input, /aria-invalid="true"/, `${id} is marked invalid`);
  return unescape(m[1]!);
}

/** True when field `id` shows no problem. */
export function fine(page: string, id: string): boolean {
  return !page.includes(`id="${id}-error"`);
}

/** The value field `id` shows (an input's value, a textarea's text, a select's chosen option). */
export function valueOf(page: string, id: string): string | undefined {
  const input = new RegExp(`<input[^>]*\\bid="${id}"[^>]*>`).exec(page)?.[0];
  if (input) return unescape(/\bvalue="([^"]*)"/.exec(input)?.[1] ?? '');
  const area = new RegExp(`<textarea[^>]*\\bid="${id}"[^>]*>([^<]*)</textarea>`).exec(page);
  if (area) return unescape(area[1]!);
  const select = new RegExp(`<select[^>]*\\bid="${id}"[^>]*>([\\s\\S]*?)</select>`).exec(page);
  if (select) return unescape(/<option value="([^"]*)" selected>/.exec(select[1]!)?.[1] ?? '');
  return undefined;
}

/** The page is a form page in Korean: no English reason of the API (`must be`, `is required`) anywhere in its text. */
export function noEnglish(page: string): void {
  const text = textOf(page);
  for (const en of ['must be', 'must not', 'is required', 'is invalid', 'body/']) assert.ok(!text.includes(en), `no "${en}" on the page: ${text.slice(0, 400)}`);
}

/** Several refused fields at once: each shows its own Korean problem (matching `expected`), and the count in the summary. */
export function problemsAll(page: string, expected: Record<string, RegExp>): void {
  for (const [id, re] of Object.entries(expected)) assert.match(problemOf(page, id), re, `the problem of ${id}`);
  assert.ok(textOf(page).includes(`고칠 곳이 ${Object.keys(expected).length}군데`), 'the summary counts every problem');
  noEnglish(page);
}

/** A post with a field sent more than once (`name=a&name=b`), as a doubled form field would. */
export async function postRepeated(c: ConsoleClient, url: string, path: string, pairs: [string, string][], from: string) {
  const csrf = await c.csrf(from);
  const body = new URLSearchParams([['_csrf', csrf], ...pairs]);
  const res = await fetch(url + path, { method: 'POST', redirect: 'manual', body, headers: { cookie: c.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' } });
  return { status: res.status, text: await res.text(), location: res.headers.get('location') };
}

/** `n` characters (Hangul syllables: one character each, three bytes in UTF-8). */
export const chars = (n: number, ch = '가') => ch.repeat(n);

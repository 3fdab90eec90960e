import { html, type SafeHtml } from '../../pages/html.js';
import type { FieldErrors } from '../field-errors.js';
import { num } from './format.js';

/**
 * How every console form shows its problems (docs/console.md, "Forms"): each beside its field
 * (`<id>-error`, tied to the input by aria-describedby, the input marked aria-invalid), and all
 * of them at once in an alert at the form's top that links to each field. A problem not about
 * one field is keyed `form`.
 */

/** A field's problem beside it. */
export function problem(id: string, e: FieldErrors): SafeHtml | '' {
  return e[id] ? html`<span class="field-error" id="${id}-error">${e[id]}</span>` : '';
}

/** The attributes that tie an input to its problem (and its hint). */
export function describedBy(id: string, e: FieldErrors, hint?: string): SafeHtml | '' {
  if (e[id]) return html` aria-invalid="true" aria-describedby="${hint ? `${id}-error ${hint}` : `${id}-error`}"`;
  return hint ? html` aria-describedby="${hint}"` : '';
}

/** Every problem of the form at once, at its top (each is also beside its field). */
export function summary(e: FieldErrors): SafeHtml | '' {
  const list = Object.entries(e);
  if (list.length === 0) return '';
  return html`<div class="alert" role="alert"><p><strong>고칠 곳이 ${num(list.length)}군데 있습니다.</strong> 적은 내용은 그대로 있습니다.</p>
<ul>${list.map(([id, m]) => html`<li>${id === 'form' ? m : html`<a href="#${id}">${m}</a>`}</li>`)}</ul></div>`;
}

/**
 * One labelled input with its problem and hint: `attrs` are the input's own (type, maxlength,
 * inputmode...). The value is the one typed, so a form comes back as it was sent; a password's
 * is never written back (pass `value: ''`).
 */
export function inputField(v: { id: string; label: string; value: string | undefined; e: FieldErrors; attrs?: SafeHtml; hint?: string; name?: string }): SafeHtml {
  const hintId = v.hint ? `${v.id}-hint` : undefined;
  return html`<div class="field"><label for="${v.id}">${v.label}</label><input id="${v.id}" name="${v.name ?? v.id}" value="${v.value ?? ''}"${v.attrs ? html` ${v.attrs}` : ''}${describedBy(v.id, v.e, hintId)}>${problem(v.id, v.e)}${v.hint ? html`<span class="hint" id="${hintId}">${v.hint}</span>` : ''}</div>`;
}

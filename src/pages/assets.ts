import { createHash } from 'node:crypto';

/**
 * The one stylesheet every customer page links (layout() → /assets/sunap.css). Mobile first:
 * one column, 16px+ text so iOS does not zoom into inputs, 48px tap targets, colours with at
 * least 4.5:1 contrast on their backgrounds. Shared class names (.card, .facts, .notice,
 * .alert, .btn, table.items) are meant for every page under src/pages.
 */
export const SUNAP_CSS = `
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:#f2f4f7;color:#1a1f29;font:16px/1.55 -apple-system,BlinkMacSystemFont,"Apple SD Gothic Neo","Malgun Gothic","Noto Sans KR","Noto Sans CJK KR","Nanum Gothic",system-ui,sans-serif;word-break:keep-all;overflow-wrap:anywhere}
.page{max-width:32rem;margin:0 auto;padding:1rem .75rem 2.5rem}
h1{font-size:1.375rem;line-height:1.35;margin:.25rem 0 .5rem}
h2{font-size:1.0625rem;margin:0 0 .75rem}
p{margin:.5rem 0}
a{color:#0b57d0}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,[tabindex]:focus-visible{outline:3px solid #0b57d0;outline-offset:2px}
.merchant{padding:.25rem .25rem .75rem}
.merchant .store{margin:0;color:#4a5363;font-size:.9375rem;font-weight:600}
.card{background:#fff;border-radius:14px;padding:1.125rem 1rem;margin:0 0 .875rem;box-shadow:0 1px 2px rgba(16,24,40,.08)}
.amount{margin:0;font-size:2rem;font-weight:800;letter-spacing:-.01em;color:#10151f;font-variant-numeric:tabular-nums}
.amount-label{margin:0;color:#4a5363;font-size:.9375rem}
.facts{margin:.75rem 0 0;display:grid;grid-template-columns:auto 1fr;gap:.375rem 1rem}
.facts dt{color:#4a5363}
.facts dd{margin:0;text-align:right;font-weight:600;font-variant-numeric:tabular-nums}
.facts .total{font-size:1.0625rem;font-weight:800;color:#10151f}
.info{white-space:pre-line;background:#eef4ff;border-left:4px solid #0b57d0;border-radius:8px;padding:.75rem .875rem;margin:0 0 .875rem;color:#1a1f29}
.table-wrap{overflow-x:auto}
table.items{width:100%;border-collapse:collapse;font-size:.9375rem;font-variant-numeric:tabular-nums}
table.items caption{text-align:left;font-weight:700;font-size:1.0625rem;padding:0 0 .5rem}
table.items th,table.items td{padding:.625rem .25rem;border-bottom:1px solid #e3e7ee;vertical-align:top;text-align:left}
table.items thead th{color:#4a5363;font-weight:600;font-size:.8125rem;padding-top:0}
table.items .num{text-align:right;white-space:nowrap;font-weight:700}
table.items tbody th{font-weight:400}
table.items .item-name{display:block;font-weight:700}
table.items .publisher,table.items .detail{display:block;color:#4a5363;font-size:.8125rem}
table.items tfoot th,table.items tfoot td{border-bottom:0;font-weight:800;font-size:1rem;padding-top:.75rem}
form{margin:0}
.field{margin:0 0 1rem}
.field label{display:block;font-weight:700;margin:0 0 .375rem}
.hint{display:block;color:#4a5363;font-size:.875rem;margin:.25rem 0 0}
.field-error{display:block;color:#b3261e;font-size:.9375rem;font-weight:600;margin:.375rem 0 0}
input,select{display:block;width:100%;min-height:3rem;padding:.625rem .75rem;font:inherit;font-size:1.125rem;color:#10151f;background:#fff;border:1.5px solid #8a93a3;border-radius:10px;font-variant-numeric:tabular-nums}
input[aria-invalid="true"],select[aria-invalid="true"]{border-color:#b3261e;background:#fff8f7}
.row{display:grid;grid-template-columns:1fr 1fr;gap:0 .75rem}
.btn{display:block;width:100%;min-height:3.25rem;padding:.75rem 1rem;border:0;border-radius:12px;background:#0b57d0;color:#fff;font:inherit;font-size:1.125rem;font-weight:800;text-align:center;text-decoration:none;cursor:pointer}
.btn:hover{background:#0842a0}
.btn.secondary{background:#fff;color:#0b57d0;border:1.5px solid #0b57d0}
.alert{border-radius:10px;padding:.75rem .875rem;margin:0 0 1rem;background:#fdecea;color:#8c1d18;border:1px solid #f3b8b2}
.alert p{margin:0}
.alert ul{margin:.375rem 0 0;padding-left:1.25rem}
.notice{color:#4a5363;font-size:.875rem;margin:.75rem 0 0}
.state{text-align:center;padding:1.75rem 1rem}
.state .badge{display:inline-block;padding:.25rem .75rem;border-radius:999px;background:#e3e7ee;color:#1a1f29;font-weight:700;font-size:.875rem}
.state .badge.ok{background:#e6f4ea;color:#0d652d}
.state .badge.warn{background:#fef7e0;color:#7a4f01}
.sandbox{background:#fff4d6;color:#5c3d00;border-radius:10px;padding:.625rem .875rem;margin:0 0 .875rem;font-size:.875rem}
.sandbox code{font-size:.9375rem;font-weight:700}
footer.foot{text-align:center;color:#4a5363;font-size:.8125rem;margin-top:1.5rem}
@media (min-width:40rem){.page{padding-top:2rem}.amount{font-size:2.25rem}table.items{font-size:.9375rem}}
`.trim();

export const SUNAP_CSS_ETAG = `"${createHash('sha256').update(SUNAP_CSS).digest('base64url').slice(0, 22)}"`;

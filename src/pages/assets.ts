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
.page.wide{max-width:72rem}
.skip{position:absolute;left:-999px;top:0;background:#fff;color:#0b57d0;padding:.5rem .75rem;z-index:2}
.skip:focus{left:.5rem}
.topbar{background:#10151f;color:#fff}
.topbar .inner{max-width:72rem;margin:0 auto;padding:.375rem .75rem;display:flex;flex-wrap:wrap;align-items:center;gap:.25rem .75rem}
.topbar .brand{font-weight:800;color:#fff;text-decoration:none;margin-right:auto;padding:.5rem 0}
.topbar .who{color:#d7dce4;font-size:.8125rem}
.topbar form{display:inline}
.topbar .link-btn{color:#fff;border-color:#8a93a3}
.console-nav{background:#1d2533}
.console-nav ul{list-style:none;margin:0 auto;padding:.25rem .5rem;max-width:72rem;display:flex;flex-wrap:wrap;gap:.125rem}
.console-nav a{display:inline-block;padding:.625rem .625rem;border-radius:8px;color:#fff;text-decoration:none;font-weight:600;font-size:.9375rem}
.console-nav a[aria-current="page"]{background:#0b57d0}
.console-nav a:focus-visible,.topbar a:focus-visible,.topbar button:focus-visible{outline:3px solid #fff;outline-offset:1px}
.link-btn{display:inline-block;background:none;border:1.5px solid #0b57d0;border-radius:8px;color:#0b57d0;font:inherit;font-size:.875rem;font-weight:700;padding:.375rem .625rem;cursor:pointer;text-decoration:none;min-height:2.25rem}
.btn.inline{display:inline-block;width:auto;min-height:2.75rem;padding:.5rem 1rem;font-size:1rem}
.btn.danger{background:#b3261e}
.btn.danger:hover{background:#8c1d18}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.75rem 0}
.actions form{margin:0}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(9.5rem,1fr));gap:.75rem;margin:0 0 .875rem}
.stat{background:#fff;border-radius:14px;padding:.875rem 1rem;box-shadow:0 1px 2px rgba(16,24,40,.08)}
.stat .label{margin:0;font-size:.875rem;color:#4a5363;font-weight:600}
.stat .value{margin:.25rem 0 0;font-size:1.375rem;font-weight:800;font-variant-numeric:tabular-nums}
.stat .sub{margin:0;color:#4a5363;font-size:.8125rem}
table.list{width:100%;border-collapse:collapse;font-size:.9375rem;font-variant-numeric:tabular-nums;background:#fff}
table.list th,table.list td{padding:.5rem .5rem;border-bottom:1px solid #e3e7ee;text-align:left;vertical-align:top;white-space:nowrap}
table.list thead th{color:#4a5363;font-size:.8125rem;font-weight:600;background:#f7f8fa}
table.list td.num,table.list th.num{text-align:right}
table.list td.wrap{white-space:normal;min-width:10rem}
table.list caption{text-align:left;font-weight:700;padding:.25rem 0 .5rem}
.table-wrap:focus-visible{outline:3px solid #0b57d0}
.badge{display:inline-block;padding:.125rem .5rem;border-radius:999px;background:#e3e7ee;color:#1a1f29;font-weight:700;font-size:.8125rem}
.badge.ok{background:#e6f4ea;color:#0d652d}
.badge.warn{background:#fef7e0;color:#7a4f01}
.badge.bad{background:#fdecea;color:#8c1d18}
.sr-only{position:absolute;left:0;top:0;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
.filter-fold>summary{cursor:pointer;min-height:2.75rem;display:flex;align-items:center;font-weight:600}
.ledger-send>summary{cursor:pointer;min-height:2.75rem;display:flex;align-items:center}
.ledger-send ul{margin:.25rem 0 0;padding-left:1.25rem}
.filter-fold[open]>summary{margin-bottom:.5rem}
.filter-fold>summary::before,.chart-table>summary::before,.ledger-send>summary::before{content:"▸";margin-right:.5rem}
.filter-fold[open]>summary::before,.chart-table[open]>summary::before,.ledger-send[open]>summary::before{content:"▾"}
@media (max-width:39.99rem){
table.cards thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}
table.cards,table.cards tbody{display:block}
table.cards caption{display:block}
table.cards tr{display:grid;grid-template-columns:minmax(0,1fr) auto;grid-auto-flow:row dense;gap:.125rem .75rem;padding:.625rem .25rem;border-bottom:1px solid #e3e7ee}
table.cards td{display:block;border:0;padding:0;white-space:normal;min-width:0;overflow-wrap:anywhere}
table.cards td,table.cards td.num{text-align:left}
table.cards td.wrap{min-width:0}
table.cards td:nth-child(even){text-align:right}
table.cards td.start{grid-column:1;text-align:left}
table.cards td.end{grid-column:2;text-align:right}
table.cards td.full{grid-column:1/-1;text-align:left}
table.cards td.more,table.cards td:empty{display:none}
table.cards td.sub{color:#4a5363;font-size:.875rem}
table.cards tr.row-error{background:#fff8f7}
table.cards td[data-label]::before{content:attr(data-label) " ";color:#4a5363;font-size:.8125rem;font-weight:400}
table.cards td.actions{display:flex;justify-content:flex-start;margin:.25rem 0 0}
table.cards td.actions.end{justify-content:flex-end}
table.cards pre,table.cards code{white-space:pre-wrap;overflow-wrap:anywhere}
pre.secret{white-space:pre-wrap}
}
.filters{display:grid;grid-template-columns:1fr;gap:.5rem .75rem;align-items:end}
.filters .field{margin:0}
.filters label{font-size:.875rem}
.filters input,.filters select{font-size:1rem;min-height:2.75rem}
@media (min-width:48rem){.filters{grid-template-columns:2fr 1fr 1fr 1fr 1fr 1fr auto}.filters .wide-field{grid-column:1/-1}}
.pager{display:flex;gap:.75rem;align-items:center;margin:.75rem 0}
.timeline{list-style:none;margin:0;padding:0;border-left:3px solid #c9d2e0}
.timeline li{position:relative;margin:0 0 .75rem;padding:0 0 0 1rem}
.timeline li::before{content:"";position:absolute;left:-.5rem;top:.45rem;width:.75rem;height:.75rem;border-radius:50%;background:#0b57d0}
.timeline li.bad::before{background:#b3261e}
.timeline time{display:block;color:#4a5363;font-size:.8125rem;font-variant-numeric:tabular-nums}
.timeline .what{display:block;font-weight:700}
.timeline .detail{display:block;color:#4a5363;font-size:.875rem;overflow-wrap:anywhere}
.chart svg{width:100%;height:auto;display:block}
.chart .bar{fill:#0b57d0}
.chart .bar.cancel{fill:#b3261e}
.chart svg{height:10rem}
.chart .legend{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem;padding:0;margin:0 0 .5rem;font-size:.875rem}
.chart .swatch{display:inline-block;width:.875rem;height:.875rem;border-radius:2px;margin-right:.375rem;vertical-align:-.125rem;background:#0b57d0}
.chart .swatch.cancel{background:#b3261e}
.chart-days{list-style:none;display:grid;grid-template-columns:repeat(30,1fr);padding:0;margin:.25rem 0 0;font-size:.8125rem;color:#4a5363}
.chart-days li{white-space:nowrap;overflow:visible}
.chart-days li:last-child{direction:rtl}
.chart-table summary{cursor:pointer;min-height:2.75rem;display:flex;align-items:center;font-weight:600}
.chart .grid{stroke:#e3e7ee}
table.calendar{width:100%;border-collapse:collapse;table-layout:fixed;font-size:.75rem;font-variant-numeric:tabular-nums}
table.calendar th{color:#4a5363;font-weight:600;padding:.25rem 0}
table.calendar td{border:1px solid #e3e7ee;vertical-align:top;height:3.5rem;padding:.125rem .25rem;background:#fff}
table.calendar td.empty{background:#f7f8fa}
table.calendar .day{display:block;color:#4a5363}
table.calendar .net{display:block;font-weight:700;overflow-wrap:anywhere}
table.calendar .count{display:block;color:#4a5363}
table.calendar td.today{outline:2px solid #0b57d0;outline-offset:-2px}
textarea{display:block;width:100%;min-height:8rem;padding:.625rem .75rem;font:inherit;font-size:1rem;border:1.5px solid #8a93a3;border-radius:10px;font-family:ui-monospace,Menlo,Consolas,monospace}
input[type=file]{font-size:1rem;padding:.5rem}
input[type=checkbox]{display:inline-block;width:auto;min-height:0}
.ok-note{border-radius:10px;padding:.75rem .875rem;margin:0 0 1rem;background:#e6f4ea;color:#0d652d;border:1px solid #a8dab5}
.secret{font-family:ui-monospace,Menlo,Consolas,monospace;background:#f2f4f7;border-radius:8px;padding:.5rem;overflow-wrap:anywhere;display:block}
.muted{color:#4a5363;font-size:.875rem}
.row-error td{background:#fff8f7}
.grid2{display:grid;grid-template-columns:1fr;gap:0 1rem}
@media (min-width:48rem){.grid2{grid-template-columns:1fr 1fr}}
.item-rows,.tax-mode{border:1px solid #d5dbe5;border-radius:12px;padding:.75rem 1rem;margin:0 0 1rem}
.item-rows legend,.tax-mode legend{font-weight:700;padding:0 .25rem}
.item-row{display:grid;grid-template-columns:1fr 8rem;gap:0 .75rem;align-items:end;border-bottom:1px solid #eef1f5;margin-bottom:.5rem}
.item-row>.btn{grid-column:1/-1;min-height:2.75rem;font-size:1rem;margin-bottom:.5rem}
@media (min-width:48rem){.item-row{grid-template-columns:1fr 10rem auto}.item-row>.btn{grid-column:auto;width:auto}}
.tax-mode .choice{display:flex;align-items:center;gap:.625rem;min-height:2.75rem}
fieldset{border:0;margin:0 0 1rem;padding:0}
legend{font-weight:700;margin:0 0 .375rem}
input[type=radio]{display:inline-block;width:1.25rem;height:1.25rem;min-height:0;margin:0;flex:none}
fieldset>label{display:flex;align-items:center;gap:.625rem;min-height:2.75rem;padding:.25rem 0}
h3{font-size:1rem;margin:1rem 0 .5rem}
.methods{list-style:none;margin:0 0 .5rem;padding:0;display:grid;gap:.625rem}
.method{display:flex;align-items:center;justify-content:space-between;gap:.75rem;width:100%;min-height:3.5rem;padding:.75rem 1rem;border:1.5px solid #c9d2e0;border-radius:12px;background:#fff;color:#10151f;font:inherit;font-size:1.0625rem;font-weight:700;text-align:left;cursor:pointer}
.method:hover{border-color:#0b57d0;background:#f5f8ff}
.method .sub{display:block;font-weight:400;font-size:.875rem;color:#4a5363}
.method .go{color:#0b57d0;font-size:1.5rem;line-height:1}
.account-number{margin:.25rem 0 .5rem;font-size:1.5rem;font-weight:800;letter-spacing:.02em;font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
.choices{list-style:none;margin:0;padding:0;display:grid;gap:.375rem}
.choices label{display:flex;align-items:center;gap:.625rem;min-height:3rem;padding:.5rem .75rem;border:1.5px solid #c9d2e0;border-radius:10px;font-weight:600;cursor:pointer}
.card.window{border:2px solid #7a4f01}
.window-other{margin-top:1.25rem;padding-top:1rem;border-top:1px solid #e3e7ee}
.nowrap{white-space:nowrap}
.window-bar{margin:-1.125rem -1rem 1rem;padding:.625rem 1rem;border-radius:12px 12px 0 0;background:#7a4f01;color:#fff;font-weight:800}
`.trim();

export const SUNAP_CSS_ETAG = `"${createHash('sha256').update(SUNAP_CSS).digest('base64url').slice(0, 22)}"`;

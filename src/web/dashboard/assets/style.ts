/**
 * The dashboard's stylesheet, shipped as a string so the app needs no
 * filesystem (workerd has none). Light and dark follow the system setting.
 * No inline styles anywhere: the CSP allows none.
 *
 * @module
 */

/** The stylesheet. */
export const STYLE_CSS: string = `
:root{--bg:#f6f7f9;--panel:#fff;--text:#1c2330;--muted:#5f6b7a;--line:#e2e6eb;--accent:#0f766e;--accent-soft:#e6f4f2;
--danger:#b42318;--danger-soft:#fdecea;--warn:#a15c07;--warn-soft:#fff4e0;--ok:#027a48;--code:#f1f3f6;--shadow:0 1px 2px rgba(16,24,40,.06);
--c0:#0f766e;--c1:#7c3aed;--c2:#d97706;--c3:#2563eb;--c4:#db2777}
@media (prefers-color-scheme:dark){:root{--bg:#0f1318;--panel:#171c23;--text:#e6e9ee;--muted:#9aa5b4;--line:#29313b;
--accent:#2dd4bf;--accent-soft:#123330;--danger:#f97066;--danger-soft:#3a1d1b;--warn:#fdb022;--warn-soft:#3a2a10;--ok:#32d583;
--code:#11161c;--shadow:none;--c0:#2dd4bf;--c1:#a78bfa;--c2:#fbbf24;--c3:#60a5fa;--c4:#f472b6}}
*{box-sizing:border-box}[hidden]{display:none!important}
html{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--text);background:var(--bg)}
body{margin:0;min-height:100vh;display:flex;flex-direction:column}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
pre{background:var(--code);border:1px solid var(--line);border-radius:6px;padding:10px 12px;overflow:auto;max-height:480px;
white-space:pre-wrap;word-break:break-word;margin:0}
.top{display:flex;align-items:center;gap:18px;padding:0 20px;background:var(--panel);border-bottom:1px solid var(--line);
flex-wrap:wrap;min-height:52px}
.brand{font-weight:700;font-size:16px;color:var(--text);letter-spacing:.2px;display:flex;align-items:center;gap:8px}
.brand:hover{text-decoration:none}.brand i{width:12px;height:12px;border-radius:3px;background:var(--accent);display:inline-block}
.nav{display:flex;gap:2px;flex-wrap:wrap;flex:1}
.nav a{color:var(--muted);padding:15px 10px 13px;border-bottom:2px solid transparent;font-weight:500}
.nav a:hover{color:var(--text);text-decoration:none}.nav a.active{color:var(--text);border-bottom-color:var(--accent)}
.badge{display:inline-block;min-width:18px;padding:0 6px;border-radius:9px;background:var(--line);color:var(--text);
font-size:11.5px;line-height:18px;text-align:center;margin-left:4px;font-weight:600}
.badge.danger{background:var(--danger-soft);color:var(--danger)}.badge.warn{background:var(--warn-soft);color:var(--warn)}
.badge.ok{background:var(--accent-soft);color:var(--accent)}
.live{margin-left:auto}
.summary{display:flex;flex-wrap:wrap;gap:0;background:var(--panel);border-bottom:1px solid var(--line);padding:0 12px}
.summary a{display:flex;flex-direction:column;padding:8px 14px;color:var(--text);min-width:96px}
.summary a:hover{text-decoration:none;background:var(--bg)}
.summary b{font-size:17px;font-variant-numeric:tabular-nums}.summary span{color:var(--muted);font-size:12px}
main{flex:1;padding:20px;max-width:1400px;width:100%;margin:0 auto}
footer{padding:14px 20px;color:var(--muted);font-size:12px;border-top:1px solid var(--line);display:flex;gap:16px;flex-wrap:wrap}
h1{font-size:20px;margin:0 0 14px;display:flex;align-items:center;gap:10px;flex-wrap:wrap}
h2{font-size:15px;margin:0 0 10px}
.head{display:flex;align-items:center;justify-content:space-between;gap:12px;flex-wrap:wrap;margin-bottom:14px}
.head h1{margin:0}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:10px;box-shadow:var(--shadow);padding:16px;margin-bottom:18px}
.panel.flush{padding:0;overflow:auto}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(120px,1fr));gap:12px;margin-bottom:18px}
.card{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:10px 12px;box-shadow:var(--shadow);color:var(--text)}
a.card:hover{text-decoration:none;border-color:var(--accent)}
.card b{display:block;font-size:19px;font-variant-numeric:tabular-nums;margin-top:2px;white-space:nowrap}.card span{color:var(--muted);font-size:12.5px}
.card.danger b{color:var(--danger)}
.grid2{display:grid;grid-template-columns:2fr 1fr;gap:18px}@media (max-width:900px){.grid2{grid-template-columns:1fr}}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:9px 12px;border-bottom:1px solid var(--line);vertical-align:top}
th{font-size:12px;text-transform:uppercase;letter-spacing:.4px;color:var(--muted);font-weight:600;background:var(--bg);white-space:nowrap}
tr:last-child td,tr:last-child th{border-bottom:0}tbody tr:hover{background:var(--bg)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.args{max-width:420px;word-break:break-word}td.check,th.check{width:28px;padding-right:0}
.kv th{width:180px;text-transform:none;font-size:13px;letter-spacing:0;background:transparent;vertical-align:top}
.muted{color:var(--muted)}.small{font-size:12px}.nowrap{white-space:nowrap}.error{color:var(--danger)}
.tag{display:inline-block;border:1px solid var(--line);border-radius:4px;padding:0 5px;font-size:11.5px;margin:1px 2px 1px 0;
background:var(--bg)}
.btn,button{font:inherit;font-size:13px;border:1px solid var(--line);background:var(--panel);color:var(--text);border-radius:6px;
padding:5px 11px;cursor:pointer;white-space:nowrap}
.btn:hover,button:hover{border-color:var(--accent);text-decoration:none}
.btn.primary,button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
@media (prefers-color-scheme:dark){.btn.primary,button.primary{color:#06201d}}
.btn.danger,button.danger{color:var(--danger);border-color:var(--danger)}
button.danger:hover{background:var(--danger-soft)}
button[aria-pressed=true]{background:var(--accent-soft);border-color:var(--accent);color:var(--accent)}
.actions{display:flex;gap:8px;flex-wrap:wrap;align-items:center}
.bar{display:flex;gap:8px;flex-wrap:wrap;align-items:center;justify-content:space-between;padding:10px 12px;
border-bottom:1px solid var(--line)}.bar h2,.head h2{margin:0}
form.inline{display:inline}form.inline.actions{display:inline-flex}.actions.tight{flex-wrap:nowrap}
input[type=search],input[type=text],select{font:inherit;font-size:13px;padding:5px 9px;border:1px solid var(--line);
border-radius:6px;background:var(--panel);color:var(--text)}
input[type=search]{min-width:280px}
.notice{padding:10px 14px;border-radius:8px;background:var(--accent-soft);color:var(--accent);margin-bottom:14px;border:1px solid var(--accent)}
.notice.error{background:var(--danger-soft);color:var(--danger);border-color:var(--danger)}
.empty{padding:36px 16px;text-align:center;color:var(--muted)}.empty b{display:block;color:var(--text);font-size:15px;margin-bottom:4px}
.pager{display:flex;gap:6px;align-items:center;justify-content:flex-end;padding:10px 12px;border-top:1px solid var(--line)}
.pager span{color:var(--muted);margin-right:auto}
.ranges{display:flex;gap:4px}.ranges a{padding:3px 9px;border-radius:6px;border:1px solid var(--line);color:var(--muted)}
.ranges a.active{background:var(--accent-soft);color:var(--accent);border-color:var(--accent)}
.chart{min-height:240px;position:relative}.chart .nojs{color:var(--muted);padding:90px 0;text-align:center}
.legend-note{color:var(--muted);font-size:12px}
details summary{cursor:pointer;color:var(--accent);font-size:12.5px}details[open] summary{margin-bottom:6px}
.status{font-size:11.5px;font-weight:600;border-radius:4px;padding:1px 6px}.status.quiet{background:var(--warn-soft);color:var(--warn)}
.status.ok{background:var(--accent-soft);color:var(--accent)}.status.error{background:var(--danger-soft);color:var(--danger)}
.status.pending{background:var(--code);color:var(--muted);border:1px dashed var(--muted)}
.confirm{max-width:560px;margin:40px auto}
.when{display:inline-flex;flex-direction:column;line-height:1.3}.abs{display:block;color:var(--muted);font-size:11px;
font-variant-numeric:tabular-nums}.abs span{white-space:nowrap}td.num .abs{text-align:right}
.pager .pages{display:flex;gap:4px;align-items:center;flex-wrap:wrap}.pager .btn.current{background:var(--accent-soft);
border-color:var(--accent);color:var(--accent);cursor:default}.pager .gap{color:var(--muted);padding:0 2px}
.pager .jump{display:flex;gap:4px}.pager .jump input{width:5.5em;font:inherit;font-size:13px;padding:4px 6px;
border:1px solid var(--line);border-radius:6px;background:var(--panel);color:var(--text)}
.pager{flex-wrap:wrap}
tr:target{background:var(--warn-soft)}
body[data-page=dashboard] .summary{display:none}
.nav-toggle{position:absolute;width:1px;height:1px;opacity:0;pointer-events:none}.nav-button{display:none}
@media (max-width:720px){
.top{gap:8px 12px;padding:6px 12px;min-height:0}
.nav-button{display:inline-block;order:2;border:1px solid var(--line);border-radius:6px;padding:5px 11px;
font-weight:500;cursor:pointer}.nav-button::after{content:" ▾";color:var(--muted)}
.nav-toggle:focus-visible+.nav-button{outline:2px solid var(--accent)}
.brand{margin-right:auto}.live{order:1;margin-left:0}
.nav{display:none;order:3;flex-basis:100%;flex-direction:column;gap:0;padding-bottom:6px}
.nav-toggle:checked~.nav{display:flex}.nav a{padding:9px 4px;border-bottom:1px solid var(--line)}
.nav a.active{border-bottom-color:var(--line);color:var(--accent)}
.summary{display:grid;grid-template-columns:repeat(4,1fr);padding:0 4px}.summary a{min-width:0;padding:5px 8px}
.summary b{font-size:15px}.summary span{font-size:11px}
main{padding:12px}
.panel{padding:12px}.cards{gap:8px;grid-template-columns:repeat(3,1fr)}.card{padding:8px 10px;min-width:0}
.card b{font-size:16px;overflow:hidden;text-overflow:ellipsis}.head{gap:8px}
input[type=search]{min-width:0;flex:1}.head>form.actions{flex:1 1 100%}
.panel.flush table:not(.kv) thead{display:none}
.panel.flush table:not(.kv),.panel.flush table:not(.kv) tbody{display:block}
.panel.flush table:not(.kv) tr{display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 12px;padding:10px 12px;
border-bottom:1px solid var(--line)}
.panel.flush table:not(.kv) td{display:block;border:0;padding:0;max-width:100%;min-width:0}
.panel.flush table:not(.kv) td.args{flex:1 1 100%;max-width:none}
.panel.flush table:not(.kv) td.num{text-align:left}.panel.flush table:not(.kv) td.num .abs{text-align:left}
.panel.flush table:not(.kv) td[data-label]::before{content:attr(data-label) " ";color:var(--muted);font-size:12px}
.panel.flush table:not(.kv) td:last-child:has(form){margin-left:auto}
.kv th{width:110px}
.pager{justify-content:flex-start}.pager span.where{flex-basis:100%}
.confirm{margin:16px auto}
}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:8px}.swatch.c0{background:var(--c0)}
.swatch.c1{background:var(--c1)}.swatch.c2{background:var(--c2)}.swatch.c3{background:var(--c3)}.swatch.c4{background:var(--c4)}
.u-legend{font-size:12.5px;color:var(--text)}.u-legend th{background:transparent;text-transform:none;letter-spacing:0;font-weight:500}
.u-legend td,.u-legend th{border:0;padding:2px 6px}
`;

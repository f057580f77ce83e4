/** The pages' one style sheet: system fonts, readable on a 375 px phone, AA contrast. */
export const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;background:#fff}
a{color:#0b4fa8}
.top{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.6rem 1rem;background:#14213d;color:#fff}
.top .brand{color:#fff;font-weight:700;text-decoration:none;font-size:1.1rem}
.search{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;flex:1 1 16rem}
.search label{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
.search input{flex:1 1 10rem;min-width:0;padding:.35rem .5rem;border:1px solid #8a94a6;border-radius:4px;font:inherit}
button{font:inherit;padding:.35rem .8rem;border-radius:4px;border:1px solid #14213d;background:#e9edf5;color:#14213d;cursor:pointer}
main{max-width:70rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.5rem 0;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #d5d9e0;padding-bottom:.2rem}
h3{font-size:1rem;margin:1rem 0 .3rem}
.muted{color:#4a5160}
.mono,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em;overflow-wrap:anywhere;word-break:break-all}
.facts{display:grid;grid-template-columns:minmax(7rem,max-content) 1fr;gap:.2rem 1rem;margin:.5rem 0}
.facts dt{font-weight:600}
.facts dd{margin:0;min-width:0;overflow-wrap:anywhere}
.table{width:100%;overflow-x:auto}
table{border-collapse:collapse;width:100%;min-width:34rem;font-size:.95rem}
th,td{text-align:left;vertical-align:top;padding:.3rem .5rem;border-bottom:1px solid #e1e4ea;overflow-wrap:break-word}
th{background:#f3f5f8}
.pill{display:inline-block;padding:0 .5rem;margin:.1rem .2rem .1rem 0;border-radius:1rem;background:#e6ecf7;color:#1f3b73;font-size:.85rem;white-space:nowrap}
.pill.provider{background:#efe7f8;color:#4b2a72}
.pill.source{background:#eef3e6;color:#34501a}
.pill.deny{background:#fbe4e4;color:#8a1111}
.pill.allow{background:#e2f3e8;color:#13552c}
.pill.ask{background:#fff1d6;color:#6b4500}
.agents{list-style:none;padding-left:0}
.agents ul{list-style:none;padding-left:1.2rem;border-left:2px solid #d5d9e0}
.agent{margin:.3rem 0}
.badge{font-weight:600}
.badge.good{color:#13552c}
.badge.bad{color:#8a1111}
.expired{color:#8a1111;font-weight:600}
.panel{border:2px solid #8a94a6;border-radius:6px;padding:.8rem 1rem;margin:1rem 0;background:#f6f7f9;overflow-wrap:anywhere}
.panel.ok{border-color:#1d7a3e;background:#e9f6ee}
.panel.bad{border-color:#b42318;background:#fdeceb}
.panel.partial{border-color:#9a6700;background:#fff7e0}
.panel h2{margin-top:0;border:0}
.checks{list-style:none;padding-left:0;margin:.4rem 0}
.checks li{overflow-wrap:anywhere}
.pin{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin-top:.6rem}
.pin input[type=text]{flex:1 1 12rem;min-width:0;padding:.35rem .5rem;border:1px solid #8a94a6;border-radius:4px;font:inherit}
.drop{border:2px dashed #8a94a6;border-radius:6px;padding:.6rem;margin-top:.6rem}
.timeline{list-style:none;padding-left:0}
.timeline li{padding:.2rem 0;border-bottom:1px solid #eef0f3;overflow-wrap:anywhere}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(16rem,1fr));gap:.8rem}
.card{border:1px solid #d5d9e0;border-radius:6px;padding:.6rem .8rem;min-width:0;overflow-wrap:anywhere}
`;

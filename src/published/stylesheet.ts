import { createHash } from "node:crypto";

/**
 * The one stylesheet of published pages, served at a path naming its content hash so that it can
 * be cached forever (`Cache-Control: public, max-age=31536000, immutable`) and the pages' CSP
 * needs no inline style. Colours follow the system (`prefers-color-scheme`); the layout is a
 * grid that stacks on narrow screens, with the navigation after the content there.
 */
const CSS = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--link:#0550ae;--accent:#0969da;--mark:#fff8c5;
--kw:#cf222e;--str:#0a3069;--num:#0550ae;--com:#59636e;--fn:#6639ba;--attr:#953800}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--soft:#151b23;--link:#4493f8;--accent:#4493f8;--mark:#3b2e00;
--kw:#ff7b72;--str:#a5d6ff;--num:#79c0ff;--com:#9198a1;--fn:#d2a8ff;--attr:#ffa657}}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.6 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
a{color:var(--link)}
a:not([href]){color:inherit}
a:focus-visible,button:focus-visible,input:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.sr-only{position:absolute;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}
.skip{position:absolute;left:.5rem;top:-3rem;padding:.5rem 1rem;background:var(--bg);border:2px solid var(--accent);z-index:10}
.skip:focus{top:.5rem}
.top{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.5rem;padding:.75rem 1.25rem;border-bottom:1px solid var(--line)}
.brand{font-weight:600;font-size:1.1rem;color:var(--fg);text-decoration:none}
.sections ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}
.sections a{color:var(--muted);text-decoration:none;padding:.25rem 0}
.sections a[aria-current]{color:var(--fg);border-bottom:2px solid var(--accent)}
.search{display:flex;gap:.25rem;margin-left:auto}
.search input{font:inherit;padding:.3rem .5rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);min-width:0;width:14rem}
.search button,.menu{font:inherit;padding:.3rem .75rem;border:1px solid var(--line);border-radius:6px;background:var(--soft);color:var(--fg);cursor:pointer}
.menu{display:none;text-decoration:none}
.layout{display:grid;grid-template-columns:17rem minmax(0,1fr) 15rem;grid-template-areas:"nav main toc";max-width:90rem;margin:0 auto}
.sidebar{grid-area:nav;padding:1rem;border-right:1px solid var(--line);position:sticky;top:0;align-self:start;max-height:100vh;overflow:auto}
.sidebar ul{list-style:none;margin:0;padding:0}
.sidebar ul ul{padding-left:.9rem;border-left:1px solid var(--line);margin-left:.35rem}
.sidebar a,.sidebar .group{display:block;padding:.2rem .5rem;border-radius:6px;color:var(--fg);text-decoration:none}
.sidebar a:hover{background:var(--soft)}
.sidebar a[aria-current]{background:var(--soft);color:var(--link);font-weight:600}
.sidebar .group{font-weight:600;color:var(--muted);font-size:.85rem;text-transform:uppercase;letter-spacing:.03em;margin-top:.75rem}
.variants{margin-bottom:1rem}
.variants h2,.toc h2{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:0 0 .25rem}
main{grid-area:main;padding:1.5rem 2.5rem 3rem;min-width:0}
.toc{grid-area:toc;padding:1.5rem 1rem;position:sticky;top:0;align-self:start;max-height:100vh;overflow:auto;font-size:.9rem}
.toc ul{list-style:none;margin:0;padding:0}
.toc li.d3{padding-left:.9rem}
.toc a{display:block;padding:.15rem 0;color:var(--muted);text-decoration:none}
.toc a:hover{color:var(--link)}
.crumbs ol{display:flex;flex-wrap:wrap;list-style:none;margin:0 0 1rem;padding:0;font-size:.9rem;color:var(--muted)}
.crumbs li+li::before{content:"/";padding:0 .4rem;color:var(--muted)}
.crumbs a{color:var(--muted)}
.lead{font-size:1.15rem;color:var(--muted);margin-top:-.5rem}
.content{overflow-wrap:break-word}
.content h1,.content h2,.content h3,.content h4{line-height:1.25;margin:1.75rem 0 .75rem;scroll-margin-top:1rem}
.content h2{padding-bottom:.3rem;border-bottom:1px solid var(--line)}
.content img{max-width:100%;height:auto}
.content table{border-collapse:collapse;display:block;overflow:auto;max-width:100%}
.content th,.content td{border:1px solid var(--line);padding:.4rem .75rem}
.content blockquote{margin:1rem 0;padding:0 1rem;color:var(--muted);border-left:.25rem solid var(--line)}
.content li.task-list-item{list-style:none}
.content ul.contains-task-list{padding-left:1.25rem}
code{font:.875em/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--soft);padding:.15em .35em;border-radius:4px}
pre{background:var(--soft);border:1px solid var(--line);border-radius:8px;padding:1rem;overflow:auto}
pre code{background:none;padding:0;font-size:.85rem}
mark{background:var(--mark);color:inherit}
.hljs-keyword,.hljs-selector-tag,.hljs-meta .hljs-keyword,.hljs-doctag,.hljs-type,.hljs-template-tag{color:var(--kw)}
.hljs-string,.hljs-regexp,.hljs-meta .hljs-string,.hljs-selector-attr{color:var(--str)}
.hljs-number,.hljs-literal,.hljs-built_in,.hljs-variable,.hljs-attribute,.hljs-symbol{color:var(--num)}
.hljs-comment,.hljs-quote,.hljs-meta{color:var(--com)}
.hljs-title,.hljs-title\\.function_,.hljs-section,.hljs-name{color:var(--fn)}
.hljs-attr,.hljs-params,.hljs-property,.hljs-selector-class,.hljs-selector-id{color:var(--attr)}
.hljs-emphasis{font-style:italic}.hljs-strong{font-weight:600}
.pager{display:flex;justify-content:space-between;gap:1rem;margin-top:3rem;padding-top:1rem;border-top:1px solid var(--line)}
.pager a{display:block;padding:.75rem 1rem;border:1px solid var(--line);border-radius:8px;text-decoration:none;max-width:48%}
.pager .next{margin-left:auto;text-align:right}
.pager small{display:block;color:var(--muted)}
.notfound{max-width:40rem}
.results{list-style:none;padding:0}.results li{margin:0 0 1.25rem}
@media (max-width:64rem){.layout{grid-template-columns:15rem minmax(0,1fr);grid-template-areas:"nav main"}.toc{display:none}}
@media (max-width:48rem){
.layout{display:flex;flex-direction:column}main{order:1}.sidebar{order:2;align-self:stretch;position:static;max-height:none;border-right:0;border-top:1px solid var(--line)}
main{padding:1rem 1.25rem 2rem}.menu{display:inline-block}.search{margin-left:0;width:100%}.search input{flex:1}}
@media print{.top,.sidebar,.toc,.pager,.skip{display:none}.layout{display:block}}
`.trim();

export const STYLESHEET_BYTES: Buffer = Buffer.from(CSS, "utf8");
const hash = createHash("sha256").update(STYLESHEET_BYTES).digest("base64url").slice(0, 16);
/** Where the published pages load the stylesheet from (from the server's root); the route serves STYLESHEET_BYTES there. */
export const STYLESHEET_PATH = `/~published/style-${hash}.css`;
export const STYLESHEET_CONTENT_TYPE = "text/css; charset=utf-8";

/** The dashboard's styles (one small sheet, inlined into every page). */
export const PAGE_CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1b1f24; background: #f6f7f9; }
header { display: flex; gap: 24px; align-items: center; padding: 10px 20px; background: #1b2a41; color: #fff; }
header nav a { color: #cfd8e3; margin-right: 14px; text-decoration: none; }
header nav a.active { color: #fff; border-bottom: 2px solid #6cb4ff; }
main { padding: 16px 20px; }
h1 { font-size: 20px; margin: 4px 0 12px; } h2 { font-size: 16px; margin: 22px 0 8px; }
table { border-collapse: collapse; background: #fff; }
th, td { padding: 4px 8px; border-bottom: 1px solid #e3e6ea; text-align: left; vertical-align: top; }
th { background: #eef1f4; font-weight: 600; white-space: nowrap; }
th.sortable { cursor: pointer; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.muted { color: #6a737d; }
.live-count { margin-left: 6px; }
.status { padding: 1px 7px; border-radius: 9px; font-size: 12px; background: #e3e6ea; }
.status.running { background: #d5e9ff; color: #0b4f9c; }
.status.completed { background: #d8f3dc; color: #1d6b2f; }
.status.failed { background: #ffdcdc; color: #a11; }
.status.interrupted { background: #fff0c9; color: #7a5200; }
.tag { padding: 0 6px; margin: 0 3px 0 0; border: 1px solid #c9cfd6; border-radius: 9px; font-size: 12px; background: #f4f6f8; cursor: pointer; }
.tag.active { background: #0b4f9c; color: #fff; border-color: #0b4f9c; }
tr.hidden-run td { opacity: 0.55; }
.live-state { font-size: 12px; }
.live-state.live { color: #1d6b2f; }
.live-state.offline { color: #a11; }
.toolbar { display: flex; gap: 12px; align-items: center; margin-bottom: 10px; flex-wrap: wrap; }
.button { background: #1f6feb; color: #fff; padding: 4px 10px; border-radius: 5px; text-decoration: none; }
.button.disabled { background: #aab4c0; pointer-events: none; }
.chart-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 14px; }
figure.chart { margin: 0; background: #fff; border: 1px solid #e3e6ea; border-radius: 6px; padding: 8px; }
figure.chart figcaption { font-weight: 600; margin-bottom: 4px; }
.facts { display: flex; gap: 22px; flex-wrap: wrap; margin: 0 0 8px; }
.facts div span { display: block; font-size: 12px; color: #6a737d; }
.timeline rect.on { fill: #4c8bf5; } .timeline rect.off { fill: #eef1f4; }
.timeline rect.moved { stroke: #1b3a6b; stroke-width: 2; }
.timeline text { font-size: 12px; fill: #333; }
.trajectory { background: #fff; border: 1px solid #e3e6ea; border-radius: 6px; padding: 6px 10px; margin-bottom: 10px; }
.trajectory h3 { font-size: 14px; margin: 2px 0 6px; }
.task dd { margin: 0 0 6px 12px; white-space: pre-wrap; } .task dt { font-weight: 600; }
td.text { max-width: 640px; white-space: pre-wrap; font: 12px/1.35 ui-monospace, monospace; }
.ok { color: #1d6b2f; } .bad { color: #a11; }
.pager a, .pager span { margin-right: 10px; }
textarea { width: 100%; font: 13px/1.4 ui-monospace, monospace; box-sizing: border-box; }
pre.error { color: #a11; background: #fff0f0; padding: 8px; white-space: pre-wrap; }
.scroll { max-height: 480px; overflow: auto; }
.notice { background: #fff8e1; border: 1px solid #f2d98d; padding: 8px 12px; border-radius: 6px; }
`;

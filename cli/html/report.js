// report.js: draws the rheap report from the JSON object the page carries (#rheap-data).
// Plain DOM and SVG, no library: the page must open anywhere, offline, as one file.
//
// The data (written by cli/html.c):
//   suppressed  the line naming the leaks suppressions left out, or null
//   moment    "at MARKER", "at the highest point from A to B" when drawn at a moment (each
//             proc's peak_t and peak figures, and the stats' peak columns, are the heap then,
//             moment_from/moment_to the range in the recording's ns), or null
//   chart_max how many recordings are charted
//   procs[i]  one recording of a process: totals, peak, until_exit (1: the recording lasted until
//             the process ended, its never-freed blocks are leaks; 0: a window, whose blocks
//             still live when it stopped are stopped_blocks/stopped_bytes, and leaked_* are 0),
//             sample_interval (profile mode: the
//             figures but allocs and bytes are estimates; 0 in trace mode),
//             buckets {t, max, allocs} (the chart; empty but for the chart_max recordings with
//             the largest peaks, the ones charted),
//             markers [[t, label]], windows [[on, off, on_how, off_how]],
//             threads [[tid, name, allocs, bytes, frees, leaked_blocks, leaked_bytes]],
//             sizes [[lo, hi, blocks, bytes, leaked_blocks, leaked_bytes]]
//   frames[k] [name, file, line, inlined, module]
//   stacks[s] frame indices, outermost first, the allocation site last
//   stats[j]  [proc, stack (-1: the recording's smaller stacks summed), blocks, bytes,
//             leaked_blocks, leaked_bytes, peak_blocks, peak_bytes, stopped_blocks, stopped_bytes,
//             temporary_blocks, temporary_bytes, lifetimes] (weights.js reads them)
//
// The page's other scripts run before this one and define what it calls: table.js (sortable
// tables), weights.js (the weights and the lifetime filter), views.js (bottom-up, callers and
// callees).
'use strict';

const D = JSON.parse(document.getElementById('rheap-data').textContent);
const SVG_NS = 'http://www.w3.org/2000/svg';
// Leaks only where a recording lasted until its process ended; a window's live blocks are
// "live at stop", never "never freed" (schema.sql's view recording_ends).
const ENDED = D.procs.length === 0 || D.procs.some(p => p.until_exit);
const WINDOWS = D.procs.some(p => !p.until_exit);
// Drawn at a moment (rheap report --html --at/--from): the peak weight is the heap then.
if (D.moment) WEIGHTS.peak.what = `live ${D.moment}`;
// The words for the peak's figures: the moment's when drawn at one.
const PEAK_WORD = D.moment ? 'at the moment' : 'at peak';
const DEFAULT_WEIGHT = D.moment ? 'peak' : ENDED ? 'leaked' : 'stopped';
// The threads' and sizes' column of blocks not freed: leaks, a window's live blocks, or both.
const UNFREED = ENDED && WINDOWS ? 'leaked or live at stop' : ENDED ? 'never freed' : 'live at stop';
const state = {proc: 'all', weight: DEFAULT_WEIGHT, focus: null, search: null,
               view: 'top-down', life: 0, fn: null, at: null};
// The peak weight's words and button without a moment chosen on the page (moment.js).
const PEAK_WHAT = WEIGHTS.peak.what;
let PEAK_LABEL = 'at peak';

// ---- Formatting ----

function fmtBytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let u = 0, v = n;
  while (Math.abs(v) >= 1024 && u < units.length - 1) { v /= 1024; u++; }
  return (u === 0 ? String(v) : v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0)) + ' ' + units[u];
}
function fmtNum(n) { return n.toLocaleString('en-US'); }
function fmtTime(ns) {
  if (ns < 1e3) return ns + ' ns';
  if (ns < 1e6) return +(ns / 1e3).toFixed(1) + ' µs';
  if (ns < 1e9) return +(ns / 1e6).toFixed(ns < 1e7 ? 2 : 1) + ' ms';
  return +(ns / 1e9).toFixed(ns < 1e10 ? 3 : 1) + ' s';
}
function pct(a, b) { return b ? (100 * a / b).toFixed(a / b < 0.1 ? 2 : 1) + '%' : '-'; }

// ---- Building the DOM ----

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) {
    if (k === 'text') e.textContent = attrs[k];
    else if (k === 'cls') e.className = attrs[k];
    else e.setAttribute(k, attrs[k]);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}
function sv(tag, attrs, text) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text != null) e.textContent = text;
  return e;
}
// A table cell holding a number: the exact value in data-v, a readable one shown.
function numCell(v, bytes) {
  return el('td', {cls: 'n', 'data-v': v, title: fmtNum(v), text: bytes ? fmtBytes(v) : fmtNum(v)});
}

const tip = document.getElementById('tip');
function showTip(ev, html) {
  tip.innerHTML = html;
  tip.hidden = false;
  const x = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
  const y = ev.clientY + 16 + tip.offsetHeight > window.innerHeight ? ev.clientY - tip.offsetHeight - 8 : ev.clientY + 16;
  tip.style.left = x + 'px';
  tip.style.top = y + 'px';
}
function hideTip() { tip.hidden = true; }
function esc(s) { return String(s).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'})[c]); }

function procName(p) {
  return 'pid ' + p.pid + (p.rec !== 1 ? ' (recording ' + p.rec + ')' : '');
}
function frameLoc(f) {
  if (f[1]) return f[1].replace(/^.*\//, '') + (f[2] ? ':' + f[2] : '');
  return f[4] ? f[4].replace(/^.*\//, '') : '';
}
// Stats of the selected process, or of all of them.
// With a moment chosen on the page, the peak columns are the heap then (moment.js).
function selectedStats() {
  const base = state.proc === 'all' ? D.stats : D.stats.filter(s => s[0] === state.proc);
  return state.at ? momentStats(base) : base;
}

// ---- Header ----

// Processes are counted by pid: an exec starts a new recording of the same process.
function pidCount() {
  return new Set(D.procs.map(p => p.pid)).size;
}

function drawTotals() {
  document.getElementById('db').textContent = D.db + ' · rheap ' + D.version;
  const sum = k => D.procs.reduce((a, p) => a + p[k], 0);
  const peak = D.procs.reduce((a, p) => (p.peak_bytes > a.peak_bytes ? p : a), D.procs[0] || {peak_bytes: 0});
  const pids = pidCount();
  const cards = [
    ['processes', fmtNum(pids), pids],
    ['allocations', fmtNum(sum('allocs')), sum('allocs')],
    ['allocated', fmtBytes(sum('bytes')), sum('bytes')],
    ['frees', fmtNum(sum('frees')), sum('frees')],
    ENDED ? ['never freed', fmtBytes(sum('leaked_bytes')) + ' in ' + fmtNum(sum('leaked_blocks')), sum('leaked_bytes')] : null,
    WINDOWS ? ['live at stop', fmtBytes(sum('stopped_bytes')) + ' in ' + fmtNum(sum('stopped_blocks')), sum('stopped_bytes')] : null,
    [D.moment ? `largest live ${D.moment}` : 'largest peak', fmtBytes(peak.peak_bytes || 0), peak.peak_bytes || 0],
  ];
  const interval = D.procs.reduce((a, p) => Math.max(a, p.sample_interval || 0), 0);
  const note = document.getElementById('sampled');
  note.hidden = !interval;
  note.textContent = interval ? 'Profile mode: allocations were sampled about once every ' + fmtBytes(interval) +
    ' allocated; allocations and bytes allocated are exact counts, every other figure (frees, never freed, ' +
    'peaks, sites, the flamegraph and the chart) is an estimate scaled up from the samples.' : '';
  const box = document.getElementById('totals');
  for (const [k, v, exact] of cards.filter(Boolean))
    box.append(el('div', {cls: 'card', 'data-k': k, 'data-v': exact},
                  el('div', {cls: 'k', text: k}), el('div', {cls: 'v', text: v})));
}

// ---- Memory over time ----

// The recordings charted, those with the largest peaks: the page carries the slices, resident
// memory and checkpoint cuts of these only (cli/html.c's HTML_CHARTS).
const CHART_MAX = D.chart_max || 12;

function niceStep(max, n) {
  const raw = max / n, mag = Math.pow(10, Math.floor(Math.log10(raw || 1)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

// A step for a bytes axis: a round number of B, KiB, MiB, ... so labels read 256 KiB, 512 KiB.
function byteStep(max, n) {
  let unit = 1;
  while (max / unit >= 1024 * n) unit *= 1024;
  const raw = max / n / unit;
  for (const m of [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]) if (m >= raw) return m * unit;
  return 1024 * unit;
}

function drawChart(box, p) {
  const W = Math.max(box.clientWidth, 400), H = 190, L = 70, R = 14, T = 26, B = 20;
  const b = p.buckets, n = b.t.length, end = p.end + 1;
  const ymax = Math.max(1, p.peak_bytes, ...b.max, rssMax(p)) * 1.08;
  const x = t => L + (W - L - R) * t / end;
  const y = v => H - B - (H - B - T) * v / ymax;
  const svg = sv('svg', {viewBox: `0 0 ${W} ${H}`, 'data-pid': p.pid});

  for (const w of p.windows) {
    const r = sv('rect', {class: 'window', x: x(w[0]), y: T - 6, width: Math.max(1, x(w[1]) - x(w[0])), height: H - B - T + 6});
    r.append(sv('title', {}, `recording on ${fmtTime(w[0])} – ${fmtTime(w[1])} (${w[2] || '?'} … ${w[3] || '?'})`));
    svg.append(r);
  }
  const grid = sv('g', {class: 'grid axis'});
  const ystep = byteStep(ymax, 4);
  for (let v = 0; v <= ymax; v += ystep) {
    grid.append(sv('line', {x1: L, x2: W - R, y1: y(v), y2: y(v)}));
    grid.append(sv('text', {x: L - 6, y: y(v) + 3, 'text-anchor': 'end'}, fmtBytes(v)));
  }
  const tstep = niceStep(end, 6);
  for (let t = 0; t <= end; t += tstep)
    grid.append(sv('text', {x: x(t), y: H - 5, 'text-anchor': 'middle'}, fmtTime(t)));
  svg.append(grid);

  // The largest live heap of each slice, as steps.
  let d = `M${x(0)},${y(0)}`;
  for (let i = 0; i < n; i++) {
    const t1 = i + 1 < n ? b.t[i + 1] : end;
    d += `L${x(b.t[i])},${y(b.max[i])}L${x(t1)},${y(b.max[i])}`;
  }
  d += `L${x(end)},${y(0)}Z`;
  svg.append(sv('path', {class: 'area', d}));
  drawRss(svg, p, x, y, {W, L, R, T}); // rss.js

  let lastLabel = -1e9;
  for (const [t, label] of p.markers) {
    const g = sv('g', {class: 'marker', 'data-t': t, 'data-label': label});
    g.append(sv('line', {x1: x(t), x2: x(t), y1: T - 4, y2: H - B}));
    if (x(t) - lastLabel > 44) {
      const left = x(t) > W - R - 60; // near the right edge: the label goes on the left
      g.append(sv('text', {x: x(t) + (left ? -3 : 3), y: T - 8, 'text-anchor': left ? 'end' : 'start'}, label));
      lastLabel = x(t);
    }
    g.append(sv('title', {}, `marker "${label}" at ${fmtTime(t)}`));
    svg.append(g);
  }
  if (p.peak_t >= 0) {
    const px = x(p.peak_t), py = y(p.peak_bytes);
    const g = sv('g', {class: 'peak', 'data-t': p.peak_t, 'data-bytes': p.peak_bytes});
    g.append(sv('circle', {cx: px, cy: py, r: 4}));
    const right = px < W * 0.7;
    g.append(sv('text', {x: px + (right ? 8 : -8), y: Math.max(py - 6, T + 4), 'text-anchor': right ? 'start' : 'end'},
                `${D.moment ? 'live' : 'peak'} ${fmtBytes(p.peak_bytes)} at ${fmtTime(p.peak_t)}`));
    svg.append(g);
  }
  const cursor = sv('line', {class: 'cursor', y1: T, y2: H - B, x1: -10, x2: -10});
  svg.append(cursor);
  const hit = sv('rect', {x: L, y: T, width: W - L - R, height: H - B - T, fill: 'transparent'});
  hit.addEventListener('mousemove', ev => {
    const r = svg.getBoundingClientRect();
    const t = (ev.clientX - r.left) * W / r.width - L;
    const i = Math.max(0, Math.min(n - 1, Math.floor(t / (W - L - R) * n)));
    cursor.setAttribute('x1', x(b.t[i]));
    cursor.setAttribute('x2', x(b.t[i]));
    const t1 = i + 1 < n ? b.t[i + 1] : end;
    showTip(ev, `${fmtTime(b.t[i])} – ${fmtTime(t1)}<br>largest live heap <b>${fmtBytes(b.max[i])}</b>` +
                `<br>${fmtNum(b.allocs[i])} allocations in this slice`);
  });
  hit.addEventListener('mouseleave', () => { hideTip(); cursor.setAttribute('x1', -10); cursor.setAttribute('x2', -10); });
  svg.append(hit);
  momentChart(svg, hit, D.procs.indexOf(p), {L, R, W, T, H, B, end, x});
  return svg;
}

function drawCharts() {
  const box = document.getElementById('charts');
  box.textContent = '';
  const procs = D.procs.map((p, i) => [p, i]).sort((a, b) => b[0].peak_bytes - a[0].peak_bytes);
  for (const [p, i] of procs.slice(0, CHART_MAX)) {
    const div = el('div', {cls: 'chart proc', 'data-pid': p.pid, 'data-rec': p.rec, 'data-index': i});
    div.append(el('h3', null, procName(p) + ' ',
                  el('span', {cls: 'muted', text: (p.cmd || p.exe || '') + ' · ' + fmtNum(p.allocs) + ' allocations, ' +
                              (p.until_exit ? fmtBytes(p.leaked_bytes) + ' never freed'
                                            : fmtBytes(p.stopped_bytes) + ' live at stop') + ', ran ' + fmtTime(p.end)})));
    box.append(div);
    if (p.allocs === 0 && p.markers.length === 0 && !p.rss)
      div.append(el('p', {cls: 'muted', text: 'no allocation recorded'}));
    else
      div.append(drawChart(div, p));
    drawStacked(div, i);
  }
  if (procs.length > CHART_MAX)
    box.append(el('p', {cls: 'muted', text: `${procs.length - CHART_MAX} more processes with smaller peaks not drawn`}));
}

// ---- Flamegraph ----

function buildTree() {
  const w = WEIGHTS[state.weight];
  const root = {name: 'all', f: -1, v: 0, bytes: 0, blocks: 0, kids: new Map(), parent: null, depth: 0};
  for (const s of selectedStats()) {
    const [v, bytes, blocks] = figures(s, w, state.life);
    if (!v) continue;
    root.v += v;
    root.bytes += bytes;
    root.blocks += blocks;
    const frames = s[1] < 0 ? null : D.stacks[s[1]];
    let node = root;
    const path = frames ? viewPath(frames) : [-1];
    for (const fi of path) {
      const name = fi < 0 ? '(smaller stacks)' : D.frames[fi][0];
      let k = node.kids.get(name);
      if (!k) {
        k = {name, f: fi, v: 0, bytes: 0, blocks: 0, kids: new Map(), parent: node, depth: node.depth + 1};
        node.kids.set(name, k);
      }
      k.v += v;
      k.bytes += bytes;
      k.blocks += blocks;
      node = k;
    }
  }
  return root;
}

function hue(name) {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return h;
}
function color(node) {
  if (node.f < 0) return '#d5d9e0';
  const h = hue(node.name);
  return `hsl(${18 + h % 32}, ${70 + (h >> 5) % 20}%, ${58 + (h >> 9) % 14}%)`;
}

let tree = null;
// The flamegraph's cells as last drawn ({node, x, w, d, ctx}; a cell's data-i indexes it) and
// the node they were drawn around: one listener on #fg serves them all (setupFlame).
let drawnCells = [], drawnFocus = null;
function drawFlame() {
  const box = document.getElementById('fg');
  const focus = state.focus || tree;
  const W = box.clientWidth || 1000, ROW = 18;
  const cells = [];
  // The focus's ancestors, full width, dimmed: clicking one zooms out to it.
  const chain = [];
  for (let a = focus; a; a = a.parent) chain.unshift(a);
  chain.forEach((a, d) => cells.push({node: a, x: 0, w: W, d, ctx: a !== focus}));
  const base = chain.length - 1;
  let maxDepth = base;
  // Frames narrower than a pixel are not drawn, nor what lies under them: deep stacks
  // (bottom-up above all) would otherwise make tens of thousands of invisible cells. Zooming in
  // shows them.
  (function lay(node, x, d) {
    let cx = x;
    const kids = [...node.kids.values()].sort((a, b) => b.v - a.v || (a.name < b.name ? -1 : 1));
    for (const k of kids) {
      const w = W * k.v / focus.v;
      if (w < 1) break; // sorted: the rest are narrower still
      cells.push({node: k, x: cx, w, d: d + 1});
      if (d + 1 > maxDepth) maxDepth = d + 1;
      lay(k, cx, d + 1);
      cx += w;
    }
  })(focus, 0, base);
  // The cells as one HTML text: the browser's parser makes thousands of them several times
  // faster than one createElement each.
  const re = state.search;
  const html = [];
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i], n = c.node;
    const f = n.f >= 0 ? D.frames[n.f] : null;
    const name = esc(n.name);
    html.push(`<div class="cell${c.ctx ? ' ctx' : ''}${f && f[3] ? ' inl' : ''}${re && re.test(n.name) ? ' hit' : ''}" ` +
              `data-name="${name}" data-v="${n.v}" data-depth="${c.d}" data-i="${i}" ` +
              `style="left:${c.x}px;width:${c.w}px;top:${c.d * ROW}px;background:${color(n)}">${c.w > 24 ? name : ''}</div>`);
  }
  box.innerHTML = html.join('');
  drawnCells = cells;
  drawnFocus = focus;
  box.style.height = (maxDepth + 1) * ROW + 'px';
  const info = document.getElementById('fg-info');
  info.textContent = tree.v ? `${fmtWeight(tree.v)} ${weightWhat()}` +
                              (WEIGHTS[state.weight].unit === 'blocks' ? `, ${fmtBytes(tree.bytes)}` : ` in ${fmtNum(tree.blocks)} blocks`) +
                              (focus !== tree ? ` · zoomed on ${focus.name}: ${fmtWeight(focus.v)}` : '')
                            : `nothing ${weightWhat()} in this selection`;
  info.dataset.v = tree.v;
  info.dataset.focus = focus.v;
  drawMatch();
  saveHash();
}

// The flamegraph's clicks and tooltips, for whatever cells drawFlame drew last.
function setupFlame() {
  const box = document.getElementById('fg');
  const cellOf = ev => {
    const div = ev.target.closest && ev.target.closest('.cell');
    return div ? drawnCells[+div.dataset.i] : null;
  };
  box.addEventListener('click', ev => {
    const c = cellOf(ev);
    if (!c) return;
    const n = c.node, frame = n.f >= 0;
    if (frame) state.fn = n.name;
    state.focus = n === drawnFocus && n.parent ? n.parent : n;
    drawFlame();
    if (frame) drawCallers();
  });
  box.addEventListener('mousemove', ev => {
    const c = cellOf(ev);
    if (!c) { hideTip(); return; }
    const n = c.node, f = n.f >= 0 ? D.frames[n.f] : null, focus = drawnFocus;
    const loc = f ? frameLoc(f) : '';
    showTip(ev, `<b>${esc(n.name)}</b>${f && f[3] ? ' <i>(inlined)</i>' : ''}` +
                (loc ? `<br>${esc(loc)}` : '') +
                `<br>${fmtWeight(n.v)} ${weightWhat()} (${fmtNum(n.bytes)} bytes, ${fmtNum(n.blocks)} blocks)` +
                `<br>${pct(n.v, tree.v)} of all` + (focus !== tree ? `, ${pct(n.v, focus.v)} of the zoomed frame` : ''));
  });
  box.addEventListener('mouseleave', hideTip);
}

// The view lives in the address's #fragment (weight, process, search, zoomed path), so a view
// can be bookmarked or passed on: report.html#weight=peak&search=parse
function saveHash() {
  const h = new URLSearchParams();
  if (state.weight !== DEFAULT_WEIGHT) h.set('weight', state.weight);
  if (state.proc !== (D.procs.length > 1 ? 'all' : 0)) h.set('proc', state.proc);
  if (state.search) h.set('search', state.search.source);
  const path = [];
  for (let a = state.focus; a && a.parent; a = a.parent) path.unshift(a.name);
  if (path.length) h.set('zoom', path.join(';'));
  viewHashSave(h);
  momentHashSave(h);
  const s = h.toString();
  try {
    if (s !== location.hash.slice(1)) history.replaceState(null, '', s ? '#' + s : location.pathname + location.search);
  } catch (e) { /* some browsers refuse it for file: pages; the view still works */ }
}
function loadHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (WEIGHTS[h.get('weight')]) state.weight = h.get('weight');
  const p = h.get('proc');
  if (p === 'all' || (p !== null && D.procs[+p])) state.proc = p === 'all' ? 'all' : +p;
  if (h.get('search')) {
    document.getElementById('search').value = h.get('search');
    setSearch(h.get('search'));
  }
  viewHashLoad(h);
  momentHashLoad(h);
  return h.get('zoom');
}
function zoomTo(path) {
  let n = tree;
  for (const name of (path || '').split(';').filter(Boolean)) {
    n = n.kids.get(name);
    if (!n) return;
  }
  state.focus = n === tree ? null : n;
}
function setSearch(q) {
  q = q.trim();
  try { state.search = q ? new RegExp(q, 'i') : null; }
  catch (e) { state.search = new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i'); }
}

// The bytes under frames matching the search, each counted once even when a match lies
// below another match.
function drawMatch() {
  const out = document.getElementById('match');
  const re = state.search;
  if (!re) { out.textContent = ''; return; }
  let total = 0;
  (function walk(n) {
    if (n !== tree && re.test(n.name)) { total += n.v; return; }
    for (const k of n.kids.values()) walk(k);
  })(tree);
  out.textContent = `matched ${fmtWeight(total)} (${pct(total, tree.v)})`;
  out.dataset.v = total;
}

function redrawFlame() {
  tree = buildTree();
  state.focus = null;
  drawFlame();
  viewsChanged();
}

// ---- Tables ----

function stackList(si) {
  const ol = el('ol', {cls: 'stack'});
  const frames = D.stacks[si];
  for (let i = frames.length - 1; i >= 0; i--) {
    const f = D.frames[frames[i]];
    ol.append(el('li', null, f[0] + '  ', el('span', {cls: 'loc', text: frameLoc(f)}),
                 f[3] ? el('span', {cls: 'inl', text: '  inlined'}) : null));
  }
  return ol;
}
function siteOf(si) {
  if (si < 0) return {name: '(smaller stacks)', loc: ''};
  const frames = D.stacks[si], f = D.frames[frames[frames.length - 1]];
  const caller = frames.length > 1 ? D.frames[frames[frames.length - 2]][0] : null;
  return {name: f[0], loc: frameLoc(f), caller};
}
// A stack's site and its caller ("parse ← load_config"), which tells apart the stacks of one site.
function stackCell(si) {
  const s = siteOf(si);
  if (si < 0) return el('td', {text: s.name});
  const det = el('details', null, el('summary', null, s.name,
                 s.caller ? el('span', {cls: 'muted', text: '  ← ' + s.caller}) : null));
  det.addEventListener('toggle', () => { if (det.open && det.children.length === 1) det.append(stackList(si)); }, {once: false});
  return el('td', {cls: 'site', 'data-site': s.name}, det);
}

const LEAK_ROWS = 50, SITE_ROWS = 25;

function drawLeaks() {
  const all = state.proc === 'all' && D.procs.length > 1;
  const rows = selectedStats().filter(s => s[5] > 0).sort((a, b) => b[5] - a[5] || b[4] - a[4]);
  const draw = s => el('tr', {cls: 'leak'},
    numCell(s[5], true), numCell(s[4]), stackCell(s[1]), el('td', {cls: 'loc', text: siteOf(s[1]).loc}),
    all ? el('td', {text: procName(D.procs[s[0]])}) : null);
  const sup = document.getElementById('suppressed');
  sup.hidden = !D.suppressed;
  sup.textContent = D.suppressed ? D.suppressed + ' (left out of the leaks, the flamegraph and the totals)' : '';
  const box = document.getElementById('leak-table');
  box.textContent = '';
  const cols = [{t: 'bytes', n: 1, key: s => s[5]}, {t: 'blocks', n: 1, key: s => s[4]},
                {t: 'site (open for the stack)', key: s => siteOf(s[1]).name}, {t: 'location', key: s => siteOf(s[1]).loc}];
  if (all) cols.push({t: 'process', key: s => D.procs[s[0]].pid});
  box.append(rows.length ? sortTable('leaks', cols, rows, draw, LEAK_ROWS, 'smaller leaking stacks')
                         : el('p', {cls: 'muted', text: ENDED ? 'No block was left unfreed.' :
                           'No block is known to leak: every recording stopped while its process went on (a ' +
                           'window), so what it left live is "live at stop", not leaked; rheap query growth ' +
                           'shows which sites grew in it.'}));
}

function drawSites() {
  const by = new Map();
  for (const s of selectedStats()) {
    const site = siteOf(s[1]), key = site.name + '\u0001' + site.loc;
    let e = by.get(key);
    if (!e) by.set(key, e = {site, v: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0], stacks: []});
    for (let k = 0; k < 10; k++) e.v[k] += s[2 + k];
    if (s[1] >= 0) e.stacks.push(s[1]);
  }
  const rows = [...by.values()].sort((a, b) => b.v[1] - a.v[1]);
  const unfreed = ENDED ? 3 : 7;
  const draw = e => {
    const det = el('details', null, el('summary', null, e.site.name +
                   (e.stacks.length > 1 ? `  (${new Set(e.stacks).size} stacks)` : '')));
    det.addEventListener('toggle', () => {
      if (det.open && det.children.length === 1)
        for (const si of [...new Set(e.stacks)].slice(0, 5)) det.append(stackList(si));
    });
    return el('tr', {cls: 'site-row'}, numCell(e.v[1], true), numCell(e.v[0]), numCell(e.v[unfreed], true),
              numCell(e.v[5], true), numCell(e.v[9], true), el('td', {cls: 'site', 'data-site': e.site.name}, det),
              el('td', {cls: 'loc', text: e.site.loc}));
  };
  const box = document.getElementById('site-table');
  box.textContent = '';
  box.append(sortTable('sites', [{t: 'allocated', n: 1, key: e => e.v[1]}, {t: 'blocks', n: 1, key: e => e.v[0]},
                                 {t: ENDED ? 'never freed' : 'live at stop', n: 1, key: e => e.v[unfreed]},
                                 {t: PEAK_WORD, n: 1, key: e => e.v[5]}, {t: 'temporary', n: 1, key: e => e.v[9]},
                                 {t: 'site', key: e => e.site.name}, {t: 'location', key: e => e.site.loc}],
                       rows, draw, SITE_ROWS, 'sites'));
}

function drawThreads() {
  const procs = state.proc === 'all' ? D.procs : [D.procs[state.proc]];
  const rows = [];
  for (const p of procs)
    for (const t of p.threads) rows.push([p, t]);
  const many = procs.length > 1;
  const draw = ([p, t]) => el('tr', {cls: 'thread'}, el('td', {text: (many ? p.pid + ' / ' : '') + t[0]}),
                              el('td', {text: t[1] || ''}), numCell(t[2]), numCell(t[3], true), numCell(t[4]),
                              numCell(t[5]), numCell(t[6], true));
  const box = document.getElementById('thread-table');
  box.textContent = '';
  box.append(sortTable('threads', [{t: many ? 'pid / tid' : 'tid', n: 1, key: ([p, t]) => many ? p.pid * 1e7 + t[0] : t[0]},
                                   {t: 'name', key: ([, t]) => t[1] || ''}, {t: 'allocs', n: 1, key: ([, t]) => t[2]},
                                   {t: 'allocated', n: 1, key: ([, t]) => t[3]}, {t: 'frees', n: 1, key: ([, t]) => t[4]},
                                   {t: UNFREED, n: 1, key: ([, t]) => t[5]}, {t: UNFREED + ' bytes', n: 1, key: ([, t]) => t[6]}],
                       rows, draw, Infinity));
}

function drawSizes() {
  const procs = state.proc === 'all' ? D.procs : [D.procs[state.proc]];
  const by = new Map();
  for (const p of procs)
    for (const z of p.sizes) {
      let e = by.get(z[0]);
      if (!e) by.set(z[0], e = [z[0], z[1], 0, 0, 0, 0]);
      for (let k = 2; k < 6; k++) e[k] += z[k];
    }
  const rows = [...by.values()].sort((a, b) => a[0] - b[0]);
  const most = Math.max(1, ...rows.map(r => r[2]));
  const draw = r => el('tr', {cls: 'size'},
    el('td', {cls: 'n', text: r[0] === r[1] ? fmtNum(r[0]) : fmtNum(r[0]) + ' – ' + fmtNum(r[1])}),
    numCell(r[2]), numCell(r[3], true), numCell(r[4]),
    el('td', null, el('span', {cls: 'bar', style: `width:${Math.max(1, 120 * r[2] / most)}px`})));
  const box = document.getElementById('size-table');
  box.textContent = '';
  box.append(sortTable('sizes', [{t: 'size (bytes)', n: 1, key: r => r[0]}, {t: 'blocks', n: 1, key: r => r[2]},
                                 {t: 'bytes', n: 1, key: r => r[3]}, {t: UNFREED, n: 1, key: r => r[4]}, {t: ''}],
                       rows, draw, Infinity));
}

function drawSelection() {
  redrawFlame();
  drawLeaks();
  drawSites();
  drawThreads();
  drawSizes();
}

// ---- Controls ----

let zoom = null;
function setup() {
  const sel = document.getElementById('proc');
  if (D.procs.length > 1) {
    const n = pidCount();
    const what = n === D.procs.length ? `${n} processes`
      : `${n} ${n === 1 ? 'process' : 'processes'}, ${D.procs.length} recordings`;
    sel.append(el('option', {value: 'all', text: `all: ${what}`}));
  }
  D.procs.forEach((p, i) => sel.append(el('option', {value: i, text: procName(p) + ' · ' + (p.cmd || p.exe || '')})));
  state.proc = D.procs.length > 1 ? 'all' : 0;
  zoom = loadHash();
  sel.value = String(state.proc);
  sel.addEventListener('change', () => {
    state.proc = sel.value === 'all' ? 'all' : +sel.value;
    if (state.at) drawMomentNote();
    drawSelection();
  });

  const buttons = document.querySelectorAll('#weight button');
  if (D.moment) document.querySelector('#weight button[data-w="peak"]').textContent = PEAK_WORD;
  PEAK_LABEL = document.querySelector('#weight button[data-w="peak"]').textContent;
  momentWords();
  buttons.forEach(b => { b.hidden = (b.dataset.w === 'leaked' && !ENDED) || (b.dataset.w === 'stopped' && !WINDOWS); });
  const mark = () => buttons.forEach(b => b.classList.toggle('on', b.dataset.w === state.weight));
  buttons.forEach(b => b.addEventListener('click', () => { state.weight = b.dataset.w; mark(); redrawFlame(); }));
  mark();
  setupViews();
  setupFlame();

  const search = document.getElementById('search');
  search.addEventListener('input', () => { setSearch(search.value); drawFlame(); });
  document.getElementById('reset').addEventListener('click', () => { state.focus = null; drawFlame(); });
  let pending = 0;
  window.addEventListener('resize', () => {
    clearTimeout(pending);
    pending = setTimeout(() => { drawCharts(); drawFlame(); }, 150);
  });
}

try {
  drawTotals();
  setup();
  drawMomentNote();
  drawCharts();
  drawSelection();
  if (zoom) { zoomTo(zoom); drawFlame(); }
  document.body.dataset.ready = '1';
  // Milliseconds from the start of loading to a drawn page, for measuring.
  document.body.dataset.drawnMs = Math.round(performance.now());
} catch (e) {
  const box = document.getElementById('error');
  box.hidden = false;
  box.textContent = 'The report could not be drawn: ' + (e && e.stack || e);
  throw e;
}

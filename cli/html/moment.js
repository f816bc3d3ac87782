// moment.js: the page at a moment. The address's #at=MARKER|TIME or #from=A&to=B, a click on a
// memory chart (the nearest marker or cut) or a drag across it (a range) sets it; the flamegraph
// of the "at the moment" weight, the sites table's column of that name and the cards then show
// the heap at that moment, and a stacked chart shows the top sites at each cut.
//
// The data (cli/html.c, write_moments): D.moments[proc] lists the recording's markers, then its
// checkpoint cuts, each [t, label (null: a cut), blocks, bytes, [stack, blocks, bytes, ...]]
// (stack -1: the stacks the page does not show one by one, summed). A marker's rows are its
// whole heap (marker_stacks: exact); a cut's are the stacks that changed since the previous
// cut of the page, the heap after every event at or before the cut (checkpoint_stacks: exact
// there). Between them the page snaps to the latest moment at or before the time asked for and
// says so: `rheap report --html --at TIME` is exact at any nanosecond.
'use strict';

// Per proc: its moments in time order ({t, label, blocks, bytes, heap: Map stack -> [blocks,
// bytes]}), the cuts' heaps carried over from cut to cut. Built on first use.
const momentCache = new Map();
function momentsOf(pi) {
  let list = momentCache.get(pi);
  if (list) return list;
  const raw = (D.moments || [])[pi] || [];
  list = [];
  let heap = new Map();
  for (const m of raw) {
    let h;
    if (m[1] === null) {
      // A cut: the previous cut's heap with this cut's changes.
      heap = new Map(heap);
      for (let i = 0; i < m[4].length; i += 3) {
        if (m[4][i + 1] || m[4][i + 2]) heap.set(m[4][i], [m[4][i + 1], m[4][i + 2]]);
        else heap.delete(m[4][i]);
      }
      h = heap;
    } else {
      h = new Map();
      for (let i = 0; i < m[4].length; i += 3) h.set(m[4][i], [m[4][i + 1], m[4][i + 2]]);
    }
    list.push({t: m[0], label: m[1], blocks: m[2], bytes: m[3], heap: h});
  }
  // Time order; a marker before a cut of the same time (it is named).
  list.sort((a, b) => a.t - b.t || (a.label === null) - (b.label === null));
  momentCache.set(pi, list);
  return list;
}

// A time as the command line writes it ("1.8s", "250ms", "1200us", "40ns", plain ns), or null.
function parseDuration(text) {
  const m = /^\s*([0-9]+(?:\.[0-9]*)?)\s*(ns|us|µs|ms|s)?\s*$/.exec(text);
  if (!m) return null;
  const mult = {ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9}[m[2] || 'ns'];
  return Math.round(parseFloat(m[1]) * mult);
}

// The time `text` names in recording pi: a marker label (its first marker) or a duration.
function timeOf(pi, text) {
  const mk = D.procs[pi].markers.find(m => m[1] === text);
  if (mk) return {t: mk[0], label: text};
  const t = parseDuration(text);
  return t === null ? null : {t, label: null};
}

function momentName(m) {
  return m.label !== null ? `marker "${m.label}" (${fmtTime(m.t)})` : `cut ${fmtTime(m.t)}`;
}

// The moment state.at names in recording pi: {m, note} or null when it names none there.
//   {at: TEXT}: a marker is exact; a time, the latest marker or cut at or before it.
//   {from: A, to: B}: the moment with the most bytes live from A to B (the first of equals).
function resolveMoment(pi) {
  const a = state.at;
  if (!a) return null;
  const list = momentsOf(pi);
  if (a.at !== undefined) {
    const want = timeOf(pi, a.at);
    if (!want) return null;
    // A marker is exact when the page carries its heap (a page of very many markers keeps
    // only some: the others snap as a time does).
    const mk = want.label !== null && list.find(x => x.label === want.label);
    if (mk) return {m: mk, note: `at ${momentName(mk)}`};
    let best = null;
    for (const m of list) if (m.t <= want.t) best = m;
    if (!best) return null;
    if (best.t === want.t) return {m: best, note: `at ${momentName(best)}`};
    return {m: best, note: `at ${momentName(best)}, the nearest before ${fmtTime(want.t)}; ` +
                           `rheap report --html --at ${a.at} is exact`};
  }
  const from = timeOf(pi, a.from), to = timeOf(pi, a.to);
  if (!from || !to) return null;
  let best = null;
  for (const m of list)
    if (m.t >= from.t && m.t <= to.t && (!best || m.bytes > best.bytes)) best = m;
  if (!best) return null;
  return {m: best, note: `at ${momentName(best)}, the highest marker or cut from ${fmtTime(from.t)} ` +
                         `to ${fmtTime(to.t)}; rheap report --html --from ${a.from} --to ${a.to} is exact`};
}

function selectedProcs() {
  return state.proc === 'all' ? D.procs.map((p, i) => i) : [state.proc];
}

// The stats of the selection with their "at the moment" columns (peak_blocks, peak_bytes) the
// heap at the chosen moment: report.js's selectedStats when a moment is set.
function momentStats(base) {
  const out = [], by = new Map();
  for (const s of base) {
    const c = s.slice();
    c[6] = 0;
    c[7] = 0;
    by.set(s[0] + ':' + s[1], c);
    out.push(c);
  }
  for (const pi of selectedProcs()) {
    const r = resolveMoment(pi);
    if (!r) continue;
    for (const [stack, [blocks, bytes]] of r.m.heap) {
      let c = by.get(pi + ':' + stack);
      if (!c) {
        c = [pi, stack, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, []];
        by.set(pi + ':' + stack, c);
        out.push(c);
      }
      c[6] = blocks;
      c[7] = bytes;
    }
  }
  return out;
}

// The processes without the moment, named when few (a build's thousands are counted).
function missingText(names) {
  return names.length > 5 ? `${names.length} processes` : names.join(', ');
}

// The line above the charts saying which moment the page shows, and the card of its bytes.
function drawMomentNote() {
  let note = document.getElementById('moment-note');
  if (!note) {
    note = el('p', {id: 'moment-note', cls: 'moment-note'});
    const charts = document.getElementById('charts');
    charts.parentNode.insertBefore(note, charts);
  }
  let card = document.querySelector('.card[data-k="moment"]');
  if (!state.at) {
    note.hidden = true;
    if (card) card.remove();
    return;
  }
  const parts = [], missing = [];
  let bytes = 0, blocks = 0;
  for (const pi of selectedProcs()) {
    const r = resolveMoment(pi);
    if (!r) { missing.push(procName(D.procs[pi])); continue; }
    bytes += r.m.bytes;
    blocks += r.m.blocks;
    parts.push((selectedProcs().length > 1 ? procName(D.procs[pi]) + ': ' : '') + r.note);
  }
  note.hidden = false;
  note.textContent = 'Showing the heap ' + (parts.length ? parts.join(' · ') : 'of no moment') +
                     (missing.length ? ` (no such moment in ${missingText(missing)})` : '') + '. ';
  note.append(el('a', {href: '#', id: 'moment-clear', text: 'back to each peak'}));
  note.lastChild.addEventListener('click', ev => { ev.preventDefault(); setMoment(null); });
  if (!card) {
    card = el('div', {cls: 'card', 'data-k': 'moment'}, el('div', {cls: 'k', text: 'live at the moment'}),
              el('div', {cls: 'v'}));
    document.getElementById('totals').append(card);
  }
  card.dataset.v = bytes;
  card.lastChild.textContent = fmtBytes(bytes) + ' in ' + fmtNum(blocks);
}

// Sets the moment (null: back to each process's own peak) and draws what follows it.
function setMoment(at) {
  state.at = at;
  if (at) state.weight = 'peak';
  momentWords();
  drawMomentNote();
  drawCharts();
  drawSelection();
}
// The words of the peak weight: the moment's while one is set.
function momentWords() {
  WEIGHTS.peak.what = state.at ? 'live at the chosen moment' : PEAK_WHAT;
  document.querySelectorAll('#weight button').forEach(b => {
    if (b.dataset.w === 'peak') b.textContent = state.at ? 'at the moment' : PEAK_LABEL;
    b.classList.toggle('on', b.dataset.w === state.weight);
  });
}

function momentHashSave(h) {
  if (!state.at) return;
  if (state.at.at !== undefined) h.set('at', state.at.at);
  else { h.set('from', state.at.from); h.set('to', state.at.to); }
}
function momentHashLoad(h) {
  if (h.get('at')) state.at = {at: h.get('at')};
  else if (h.get('from') && h.get('to')) state.at = {from: h.get('from'), to: h.get('to')};
  if (state.at && !h.get('weight')) state.weight = 'peak';
}

// A memory chart's clicks and drags: a click sets the moment to the nearest marker or cut, a
// drag the range under it. g: the chart's geometry {L, R, W, end} and x(t).
function momentChart(svg, hit, pi, g) {
  const tAt = ev => {
    const r = svg.getBoundingClientRect();
    const px = (ev.clientX - r.left) * g.W / r.width;
    return Math.max(0, Math.min(g.end, (px - g.L) / (g.W - g.L - g.R) * g.end));
  };
  // The chosen moment, a solid line, and the range, shaded.
  const r = state.at && resolveMoment(pi);
  if (state.at && state.at.from !== undefined) {
    const a = timeOf(pi, state.at.from), b = timeOf(pi, state.at.to);
    if (a && b)
      svg.insertBefore(sv('rect', {class: 'moment-range', x: g.x(a.t), y: g.T, width: Math.max(1, g.x(b.t) - g.x(a.t)),
                                   height: g.H - g.B - g.T}), hit);
  }
  if (r)
    svg.insertBefore(sv('line', {class: 'moment', 'data-t': r.m.t, x1: g.x(r.m.t), x2: g.x(r.m.t), y1: g.T - 4, y2: g.H - g.B}), hit);
  const drag = sv('rect', {class: 'moment-range', x: -10, y: g.T, width: 0, height: g.H - g.B - g.T});
  drag.style.pointerEvents = 'none';
  svg.insertBefore(drag, hit);
  let down = null;
  hit.style.cursor = 'crosshair';
  hit.addEventListener('mousedown', ev => { down = {x: ev.clientX, t: tAt(ev)}; ev.preventDefault(); });
  hit.addEventListener('mousemove', ev => {
    if (!down) return;
    const t = tAt(ev), a = Math.min(t, down.t), b = Math.max(t, down.t);
    drag.setAttribute('x', g.x(a));
    drag.setAttribute('width', g.x(b) - g.x(a));
  });
  const up = ev => {
    if (!down) return;
    const start = down;
    down = null;
    if (D.procs.length > 1) {
      state.proc = pi;
      document.getElementById('proc').value = String(pi);
    }
    if (Math.abs(ev.clientX - start.x) > 4) {
      const t = tAt(ev);
      setMoment({from: String(Math.round(Math.min(t, start.t))), to: String(Math.round(Math.max(t, start.t)))});
      return;
    }
    // A click: the nearest marker (by its label) or cut (by its time).
    let best = null;
    for (const m of momentsOf(pi))
      if (!best || Math.abs(m.t - start.t) < Math.abs(best.t - start.t)) best = m;
    if (best) setMoment({at: best.label !== null ? best.label : String(best.t)});
  };
  hit.addEventListener('mouseup', up);
  hit.addEventListener('mouseleave', ev => { if (down) up(ev); });
}

// ---- The top sites over time ----

const STACKED_SITES = 8;
const STACKED_COLORS = ['#2f6fdb', '#d43d2f', '#3a9d5d', '#e0a020', '#7a5bd0', '#1fa0a8', '#c2557e', '#8a6d3b'];

// The bytes of each site (function and location of the allocation site) at each cut of
// recording pi; the top STACKED_SITES by their largest, the rest as "other" on top.
function drawStacked(box, pi) {
  const cuts = momentsOf(pi).filter(m => m.label === null);
  if (cuts.length < 2) return;
  const siteKey = stack => { const s = siteOf(stack); return stack < 0 ? s.name : s.name + ' ' + s.loc; };
  const series = new Map();
  cuts.forEach((m, i) => {
    for (const [stack, [, bytes]] of m.heap) {
      const k = siteKey(stack);
      let a = series.get(k);
      if (!a) series.set(k, a = new Array(cuts.length).fill(0));
      a[i] += bytes;
    }
  });
  const ranked = [...series.entries()].filter(([k]) => k !== '(smaller stacks)')
    .map(([k, a]) => [k, a, Math.max(...a)]).sort((a, b) => b[2] - a[2] || (a[0] < b[0] ? -1 : 1));
  const top = ranked.slice(0, STACKED_SITES);
  const other = new Array(cuts.length).fill(0);
  for (const [k, a] of series) if (!top.some(e => e[0] === k)) a.forEach((v, i) => { other[i] += v; });
  const layers = top.map(e => [e[0], e[1]]);
  if (other.some(v => v)) layers.push(['other', other]);
  const W = Math.max(box.clientWidth, 400), H = 150, L = 70, R = 14, T = 10, B = 20;
  const end = D.procs[pi].end + 1;
  const tot = cuts.map((m, i) => layers.reduce((a, l) => a + l[1][i], 0));
  const ymax = Math.max(1, ...tot) * 1.05;
  const x = t => L + (W - L - R) * Math.max(0, t) / end, y = v => H - B - (H - B - T) * v / ymax;
  const svg = sv('svg', {viewBox: `0 0 ${W} ${H}`, class: 'stacked', 'data-pid': D.procs[pi].pid});
  const grid = sv('g', {class: 'grid axis'});
  const ystep = byteStep(ymax, 3);
  for (let v = 0; v <= ymax; v += ystep) {
    grid.append(sv('line', {x1: L, x2: W - R, y1: y(v), y2: y(v)}));
    grid.append(sv('text', {x: L - 6, y: y(v) + 3, 'text-anchor': 'end'}, fmtBytes(v)));
  }
  svg.append(grid);
  const base = new Array(cuts.length).fill(0);
  const legend = el('div', {cls: 'legend'});
  layers.forEach(([name, a], li) => {
    const color = li < STACKED_SITES ? STACKED_COLORS[li] : '#b8bec8';
    let up = '', down = '';
    cuts.forEach((m, i) => { up += `${i ? 'L' : 'M'}${x(m.t)},${y(base[i] + a[i])}`; });
    for (let i = cuts.length - 1; i >= 0; i--) down += `L${x(cuts[i].t)},${y(base[i])}`;
    const path = sv('path', {class: 'layer', d: up + down + 'Z', fill: color, 'data-site': name,
                             'data-max': Math.max(...a)});
    path.append(sv('title', {}, `${name}: at most ${fmtBytes(Math.max(...a))} live at a cut`));
    svg.append(path);
    a.forEach((v, i) => { base[i] += v; });
    legend.append(el('span', {cls: 'key'}, el('i', {style: `background:${color}`}), name));
  });
  const div = el('div', {cls: 'chart stacked-sites', 'data-index': pi});
  div.append(el('h4', {text: `top sites over time (bytes live at each of ${cuts.length} cuts)`}), svg, legend);
  box.append(div);
}

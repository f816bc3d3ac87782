// rss.js: the process's resident memory (RSS) on the memory chart, drawn as a line over the
// heap's area, with the gap between them at the RSS peak called out: memory that is resident
// but not live heap (the allocator's free pages, fragmentation, mappings, code, stacks).
// Loaded before report.js, whose drawChart calls drawRss and rssMax; it uses report.js's sv and
// fmtBytes, which exist by the time the chart is drawn.
//
// The data (cli/html.c's write_memory), per procs[i], each absent when the recording has none:
//   rss       {t, bytes}: at most one sample per slice of time, the largest of the slice
//   rss_peak  [t, bytes, heap]: the largest sample, and the most heap live in its slice
//   maps      [calls, bytes, peak bytes, peak t, bytes at the end]: the program's own mappings
'use strict';

const RSS_STYLE = {fill: 'none', stroke: '#c2571a', 'stroke-width': 1.4};

function rssMax(p) {
  return p.rss ? Math.max(0, ...p.rss.bytes) : 0;
}

// The words the chart and its tooltip use for the gap.
function rssGapText(p) {
  const [, bytes, heap] = p.rss_peak;
  const gap = bytes - heap;
  return `RSS ${fmtBytes(bytes)}, heap ${fmtBytes(heap)} live: ` +
         (gap > 0 ? `${fmtBytes(gap)} is not the heap` : 'all of it heap');
}

function drawRss(svg, p, x, y, box) {
  if (!p.rss || !p.rss.t.length) return;
  const t = p.rss.t, v = p.rss.bytes;
  let d = '';
  for (let i = 0; i < t.length; i++) d += `${i ? 'L' : 'M'}${x(t[i])},${y(v[i])}`;
  const line = sv('path', Object.assign({class: 'rss', d}, RSS_STYLE));
  line.append(sv('title', {}, `resident memory (RSS), sampled: ${t.length} points`));
  svg.append(line);

  const [pt, pb, heap] = p.rss_peak;
  const text = rssGapText(p);
  const g = sv('g', {class: 'rss-peak', 'data-t': pt, 'data-bytes': pb, 'data-heap': heap});
  // The gap itself: from the RSS peak down to the heap live then.
  g.append(sv('line', {x1: x(pt), x2: x(pt), y1: y(pb), y2: y(heap), stroke: RSS_STYLE.stroke,
                       'stroke-dasharray': '3,2'}));
  g.append(sv('circle', {cx: x(pt), cy: y(pb), r: 3, fill: RSS_STYLE.stroke}));
  g.append(sv('text', {x: box.W - box.R, y: 11, 'text-anchor': 'end', fill: RSS_STYLE.stroke,
                       'font-size': 11, 'font-weight': 600}, text));
  let title = `${text}, at ${fmtTime(pt)}`;
  if (p.maps)
    title += `\nthe program's own mappings (mmap, not in the heap): ${p.maps[0]} made, ` +
             `at most ${fmtBytes(p.maps[2])} mapped at ${fmtTime(p.maps[3])}, ` +
             `${fmtBytes(p.maps[4])} at the end`;
  g.append(sv('title', {}, title));
  svg.append(g);
}

// table.js: the page's tables, sortable by a click on a column's header.
//
// A table is given all its rows as data, each drawn by a function when shown, and a limit of
// rows to show: a click on a header sorts every row by that column, then the first `limit` are
// drawn, so "the 50 largest by blocks" is what the table shows after a click on blocks, not the
// 50 largest by bytes reordered. A second click on the same header turns the order round.
// Numbers sort largest first, text in alphabetical order; rows equal in the column keep their
// order of before. The order chosen for each table is kept while the page is open, so a table
// drawn again (another process, another weight) keeps it.
'use strict';

// Per table id, the chosen {col, desc}.
const SORTS = new Map();

// sortTable(id, cols, rows, draw, limit) -> an element holding the table and, when rows are
// left out, a line saying how many.
//   cols[i]  {t: header text, n: 1 for a number (right-aligned), key: row -> value to sort by
//            (none: the column does not sort), desc: 1 to sort this text column the other way}
//   rows     the data, in the order shown until a header is clicked
//   draw     row -> <tr>
//   limit    the most rows shown (Infinity: all)
//   what     how the line about rows left out names them ('leaking stacks')
function sortTable(id, cols, rows, draw, limit, what) {
  const box = el('div', {cls: 'sortable', 'data-table': id});
  const t = el('table');
  const head = el('tr');
  const body = el('tbody');
  t.append(el('thead', null, head), body);
  const note = el('p', {cls: 'muted more'});
  box.append(t, note);
  const ths = cols.map((c, i) => {
    const th = el('th', {cls: (c.n ? 'n' : '') + (c.key ? ' sorts' : ''), text: c.t, 'data-col': i});
    if (c.key) {
      th.title = 'sort by ' + c.t;
      th.addEventListener('click', () => {
        const s = SORTS.get(id);
        const desc = s && s.col === i ? !s.desc : !!(c.n || c.desc);
        SORTS.set(id, {col: i, desc});
        fill();
      });
    }
    head.append(th);
    return th;
  });
  function fill() {
    const s = SORTS.get(id);
    let shown = rows;
    if (s && cols[s.col] && cols[s.col].key) {
      const key = cols[s.col].key, sign = s.desc ? -1 : 1;
      const keyed = rows.map((r, i) => [key(r), i, r]);
      keyed.sort((a, b) => {
        const x = a[0], y = b[0];
        const c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
        return c ? sign * c : a[1] - b[1];
      });
      shown = keyed.map(k => k[2]);
    }
    ths.forEach((th, i) => {
      if (s && s.col === i) th.dataset.sort = s.desc ? 'desc' : 'asc';
      else delete th.dataset.sort;
    });
    body.textContent = '';
    const frag = document.createDocumentFragment();
    const n = Math.min(limit, shown.length);
    for (let i = 0; i < n; i++) frag.append(draw(shown[i]));
    body.append(frag);
    note.hidden = shown.length <= limit;
    note.textContent = shown.length > limit ? `${fmtNum(shown.length - limit)} more ${what || 'rows'} not shown` : '';
  }
  fill();
  return box;
}

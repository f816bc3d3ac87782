// views.js: the flamegraph's two ways up (top-down, bottom-up), the lifetime filter's control,
// and the caller/callee table of a selected function.
//
// Top-down, the top row is the outermost frame (_start, main) and each stack ends at its
// allocation site; bottom-up, the top row holds the allocation sites and each grows down into
// its callers, so a site called from many places is one wide frame. A function is its name, as
// the flamegraph merges frames: every frame of that name, whatever its line or stack.
//
// The caller/callee table of a function F, for the current process, weight and lifetime filter:
//   F's total  every stack with F in it, counted once however often F recurs in it;
//   F's self   the stacks whose allocation site is F (it asked for the memory itself);
//   a caller C the stacks where C calls F directly: total through that call, and self, the part
//              F allocated itself when called from C;
//   a callee E the stacks where F calls E directly: total through that call, and self, the part
//              E allocated itself when called from F.
// A stack counts once per caller or callee even when the call recurs in it, so no row is more
// than F's total, and the callees' totals add up to F's total less F's self.
'use strict';

const VIEW_HINT = {
  'top-down': 'from the outermost frame down to the allocation site',
  'bottom-up': 'allocation sites on top, each above its callers',
};
// The lifetime filter's names in the address: #life=1ms.
const LIFE_NAMES = ['any', '1us', '10us', '100us', '1ms', '10ms', '100ms', '1s', '10s'];

// The frames of a stack (indices, outermost first) in the order the current view draws them.
function viewPath(frames) {
  return state.view === 'bottom-up' ? frames.slice().reverse() : frames;
}

// Per stack, its frames' names outermost first, made once.
let STACK_NAMES = null;
function stackNames(si) {
  if (!STACK_NAMES) STACK_NAMES = D.stacks.map(fr => fr.map(i => D.frames[i][0]));
  return si < 0 ? ['(smaller stacks)'] : STACK_NAMES[si];
}

// ---- The controls: which way up, which lifetimes ----

function setupViews() {
  const buttons = document.querySelectorAll('#view button');
  const mark = () => buttons.forEach(b => b.classList.toggle('on', b.dataset.view === state.view));
  buttons.forEach(b => b.addEventListener('click', () => {
    state.view = b.dataset.view;
    mark();
    redrawFlame();
  }));
  mark();
  const life = document.getElementById('life');
  for (const [k, label] of LIFETIMES) life.append(el('option', {value: k, text: label}));
  life.value = String(state.life);
  life.addEventListener('change', () => { state.life = +life.value; redrawFlame(); });
}

// Called whenever the flamegraph is built again (weight, process, view or filter changed).
function viewsChanged() {
  document.getElementById('fg-hint').textContent = VIEW_HINT[state.view] +
    '; click a frame to zoom and to see its callers and callees below, click the top bar to zoom out';
  const life = document.getElementById('life');
  const applies = !!WEIGHTS[state.weight].life;
  life.disabled = !applies;
  life.title = applies ? 'only blocks freed after living at least this long, and blocks never freed'
                       : 'the lifetime filter applies to the allocated and allocations weights';
  drawCallers();
}

function viewHashSave(h) {
  if (state.view !== 'top-down') h.set('view', state.view);
  if (state.life > 0) h.set('life', LIFE_NAMES[state.life]);
  if (state.fn) h.set('fn', state.fn);
}
function viewHashLoad(h) {
  if (VIEW_HINT[h.get('view')]) state.view = h.get('view');
  const k = LIFE_NAMES.indexOf(h.get('life'));
  if (k > 0) state.life = k;
  if (h.get('fn')) state.fn = h.get('fn');
}

// ---- Callers and callees ----

function callerData(fn) {
  const w = WEIGHTS[state.weight];
  const zero = () => ({v: 0, bytes: 0, blocks: 0, sv: 0, sbytes: 0, sblocks: 0});
  const me = zero(), callers = new Map(), callees = new Map(), locs = new Set();
  const add = (e, f, self) => {
    e.v += f[0]; e.bytes += f[1]; e.blocks += f[2];
    if (self) { e.sv += f[0]; e.sbytes += f[1]; e.sblocks += f[2]; }
  };
  const entry = (map, name) => {
    let e = map.get(name);
    if (!e) map.set(name, e = Object.assign(zero(), {name, sites: new Set()}));
    return e;
  };
  for (const s of selectedStats()) {
    const f = figures(s, w, state.life);
    if (!f[0]) continue;
    const names = stackNames(s[1]), frames = s[1] < 0 ? null : D.stacks[s[1]];
    const last = names.length - 1;
    let found = false;
    const up = new Set(), down = new Set();
    for (let i = 0; i <= last; i++) {
      if (names[i] !== fn) continue;
      found = true;
      if (frames) locs.add(frameLoc(D.frames[frames[i]]).replace(/:\d+$/, ''));
      if (i > 0 && !up.has(names[i - 1])) {
        up.add(names[i - 1]);
        const e = entry(callers, names[i - 1]);
        add(e, f, i === last);
        e.sites.add(frameLoc(D.frames[frames[i - 1]]));
      }
      if (i < last && !down.has(names[i + 1])) {
        down.add(names[i + 1]);
        const e = entry(callees, names[i + 1]);
        add(e, f, i + 1 === last);
        e.sites.add(frameLoc(D.frames[frames[i]]));
      }
    }
    if (found) add(me, f, names[last] === fn);
  }
  return {me, locs, callers: [...callers.values()], callees: [...callees.values()]};
}

// Where a call is made: its file:line, or the first of them and how many more.
function sitesText(set) {
  const a = [...set].filter(Boolean);
  return a.length <= 1 ? (a[0] || '') : `${a[0]} (+${a.length - 1} more)`;
}

function selectFunction(name) {
  state.fn = name;
  drawCallers();
  saveHash();
}

function drawCallers() {
  const box = document.getElementById('callers-box');
  box.textContent = '';
  if (!state.fn) {
    box.append(el('p', {cls: 'muted', text: 'Click a frame of the flamegraph to see who calls its function and whom it calls.'}));
    return;
  }
  const r = callerData(state.fn), me = r.me;
  const blocksFirst = WEIGHTS[state.weight].unit === 'blocks';
  const part = (v, bytes, blocks) => `${fmtBytes(bytes)} in ${fmtNum(blocks)} ${blocks === 1 ? 'block' : 'blocks'}` +
    (tree && tree.v ? ` (${pct(v, tree.v)})` : '');
  box.append(el('p', {id: 'fn-summary', 'data-name': state.fn, 'data-v': me.v, 'data-bytes': me.bytes,
                      'data-blocks': me.blocks, 'data-self': me.sv, 'data-self-bytes': me.sbytes,
                      'data-self-blocks': me.sblocks},
                el('b', {text: state.fn}), ' ', el('span', {cls: 'muted', text: [...r.locs].filter(Boolean).join(', ')}),
                el('br'), `total ${part(me.v, me.bytes, me.blocks)} · self ${part(me.sv, me.sbytes, me.sblocks)} · ${weightWhat()}`));
  if (!me.v) {
    box.append(el('p', {cls: 'muted', text: `No stack with ${state.fn} in it has any of this weight in this selection.`}));
    return;
  }
  const cols = [
    {t: 'total bytes', n: 1, key: e => e.bytes}, {t: 'total blocks', n: 1, key: e => e.blocks},
    {t: 'self bytes', n: 1, key: e => e.sbytes}, {t: 'self blocks', n: 1, key: e => e.sblocks},
    {t: 'function', key: e => e.name}, {t: 'call site'},
  ];
  const row = cls => e => {
    const name = el('a', {href: '#', cls: 'fn', text: e.name, title: 'show the callers and callees of ' + e.name});
    name.addEventListener('click', ev => { ev.preventDefault(); selectFunction(e.name); });
    return el('tr', {cls, 'data-name': e.name}, numCell(e.bytes, true), numCell(e.blocks),
              numCell(e.sbytes, true), numCell(e.sblocks), el('td', null, name),
              el('td', {cls: 'loc', text: sitesText(e.sites)}));
  };
  const order = (a, b) => b.v - a.v || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const two = el('div', {cls: 'two'});
  for (const [id, title, list] of [['callers', 'Callers: who calls it', r.callers],
                                   ['callees', 'Callees: whom it calls', r.callees]]) {
    const div = el('div', {id: id + '-of'}, el('h3', {text: `${title} (${list.length})`}));
    if (list.length) {
      // The weight's own unit first until a header is clicked.
      if (!SORTS.has(id)) SORTS.set(id, {col: blocksFirst ? 1 : 0, desc: true});
      div.append(sortTable(id, cols, list.sort(order), row(id.slice(0, -1)), Infinity));
    } else {
      div.append(el('p', {cls: 'muted', text: id === 'callers' ? 'none: the outermost frame of its stacks'
                                                           : 'none: it allocated everything itself'}));
    }
    two.append(div);
  }
  box.append(two);
}

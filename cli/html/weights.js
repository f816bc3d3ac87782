// weights.js: what the flamegraph (either way up) and the caller/callee table measure, and the
// lifetime filter.
//
// Each entry of D.stats (cli/html.c, write_stat) is one stack of one recording:
//   [proc, stack, blocks, bytes, leaked_blocks, leaked_bytes, peak_blocks, peak_bytes,
//    stopped_blocks, stopped_bytes, temporary_blocks, temporary_bytes, lifetimes]
// lifetimes being [decade, blocks, bytes, ...] for the freed blocks of each decade of lifetime
// (schema.sql's stack_lifetimes: 0 under 1 µs, 1 from 1 µs to under 10 µs, ... 8 from 10 s on).
'use strict';

// Per weight: the columns of a stat holding its bytes and blocks, what the width counts (unit),
// the words that follow a figure ("1.2 MiB never freed"), and whether the lifetime filter
// applies (only to figures that are sums over every block allocated).
const WEIGHTS = {
  leaked: {bytes: 5, blocks: 4, unit: 'bytes', what: 'never freed'},
  peak: {bytes: 7, blocks: 6, unit: 'bytes', what: "live at its process's own peak (processes peak at different moments)"},
  allocated: {bytes: 3, blocks: 2, unit: 'bytes', what: 'allocated', life: true},
  allocations: {bytes: 3, blocks: 2, unit: 'blocks', what: 'made', life: true},
  temporary: {bytes: 11, blocks: 10, unit: 'bytes',
              what: 'in temporary blocks (freed before their thread allocated again)'},
  stopped: {bytes: 9, blocks: 8, unit: 'bytes', what: 'still live when recording stopped'},
};
const LIFE_COL = 12;

// The lifetime filter's choices: keep the blocks freed after living at least 10^(k+2) ns
// (decades k and up), and the blocks never freed, which lived at least until the recording
// ended; 0 keeps every block. The decades are the converter's, so the filter is exact at these
// thresholds and has no others.
const LIFETIMES = [
  [0, 'any lifetime'], [1, '≥ 1 µs'], [2, '≥ 10 µs'], [3, '≥ 100 µs'], [4, '≥ 1 ms'],
  [5, '≥ 10 ms'], [6, '≥ 100 ms'], [7, '≥ 1 s'], [8, '≥ 10 s'],
];

// [value, bytes, blocks] of stat s for weight w with the lifetime filter `life` (a LIFETIMES
// key): value is what the width counts, bytes or blocks.
function figures(s, w, life) {
  let bytes = s[w.bytes], blocks = s[w.blocks];
  if (life > 0 && w.life) {
    // Never freed: what was allocated less what every decade freed. (Not the leaked columns:
    // suppressions take blocks out of those, and the filter keeps every block that lived.)
    const L = s[LIFE_COL];
    for (let i = 0; i < L.length; i += 3) {
      if (L[i] < life) {
        blocks -= L[i + 1];
        bytes -= L[i + 2];
      }
    }
  }
  return [w.unit === 'blocks' ? blocks : bytes, bytes, blocks];
}

// Whether the lifetime filter changes what the current weight shows.
function lifeApplies() {
  return state.life > 0 && WEIGHTS[state.weight].life;
}

// A figure of the current weight as a person reads it: "1.5 MiB" or "1,024 allocations".
function fmtWeight(v) {
  return WEIGHTS[state.weight].unit === 'blocks' ? fmtNum(v) + (v === 1 ? ' allocation' : ' allocations') : fmtBytes(v);
}

// What the figures of the current weight are, with the filter when it applies: "allocated,
// of blocks that lived ≥ 1 ms or were never freed".
function weightWhat() {
  const w = WEIGHTS[state.weight];
  if (!lifeApplies()) return w.what;
  return w.what + `, of blocks that lived ${LIFETIMES[state.life][1]} or were never freed`;
}

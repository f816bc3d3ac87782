#!/bin/bash
# Feeds fuzz_names every demangled symbol of libstdc++, of LLVM and of a Rust program built with
# debug information here (a missing LLVM or rustc leaves its list out and says so), then
# replays them with their mutations and random texts.
# Usage: names_fuzz.sh FUZZ_NAMES WORKDIR
set -euo pipefail
fuzz=$1 dir=$2
rm -rf "$dir"; mkdir -p "$dir"
names() {   # names FILE OUT: the demangled names of FILE's symbol tables, one per line
    { nm -C "$1" 2>/dev/null; nm -DC "$1" 2>/dev/null; } | sed -n 's/^[0-9a-f ]* [A-Za-z] //p' |
        sort -u > "$2"
    echo "names_fuzz: $(wc -l < "$2") names from $1"
}
stdcxx=$(g++ -print-file-name=libstdc++.so)
names "$(readlink -f "$stdcxx")" "$dir/libstdc++.txt"
llvm=$(ls /usr/lib/llvm-*/lib/libLLVM-*.so 2>/dev/null | head -n 1 || true)
if [ -n "$llvm" ]; then names "$llvm" "$dir/llvm.txt"; else echo "names_fuzz: no libLLVM here, left out"; fi
if command -v rustc > /dev/null; then
    cat > "$dir/collect.rs" <<'RS'
use std::collections::{BTreeMap, HashMap};
fn main() {
    let v: Vec<String> = (0..10).map(|i| i.to_string()).collect();
    let m: HashMap<String, Vec<u8>> = v.iter().map(|s| (s.clone(), s.clone().into_bytes())).collect();
    let b: BTreeMap<usize, Box<dyn Fn(usize) -> usize>> = (0..3).map(|i| (i, Box::new(move |x| x + i) as Box<dyn Fn(usize) -> usize>)).collect();
    println!("{} {} {}", v.len(), m.len(), b.len());
}
RS
    rustc -g -o "$dir/collect" "$dir/collect.rs"
    names "$dir/collect" "$dir/rust.txt"
else
    echo "names_fuzz: no rustc here, left out"
fi
"$fuzz" "$dir"/*.txt

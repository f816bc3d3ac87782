#!/usr/bin/env python3
"""oracle.py: compares every frame of every stack in a rheap database with addr2line.

    oracle.py DB [--binutils MODULE]... [--llvm MODULE]... [--as MODULE=FILE]...
                 [--debug-dir DIR] [--expect-module MODULE]

For each distinct (module, offset) in the backtraces table, the oracle is asked for
offset - 1 (a return address points after its call), and its inline chain (function, file,
line, innermost first) must equal the rows rheap wrote for that address, frame for frame:
the function name, the file's basename and the line.

The oracle is elfutils' eu-addr2line -f -i -C, except for the modules named with --binutils,
which binutils' addr2line -f -i -C answers, and those named with --llvm, which LLVM's
llvm-symbolizer (GNU output style; $LLVM_SYMBOLIZER) answers. eu-addr2line 0.188 itself finds
no function (and no line without .debug_aranges) in much of what clang and rustc emit, and
binutils 2.40 misreads the range lists (DW_FORM_rnglistx) of clang 14's inlined calls, so
clang's programs are checked with the reader of their own toolchain. --as asks the oracle about
FILE instead of MODULE (an unstripped copy of a stripped module); --debug-dir is where
eu-addr2line looks for separate debug files. --expect-module fails the check when no frame of
that module was compared. Prints each disagreement and a summary; exits 1 when any frame
disagrees or nothing was compared.
"""
import os
import re
import sqlite3
import subprocess
import sys


def oracle_chains(tool, module, offsets, debug_dir):
    """addr2line's chain for each offset: a list of (name, basename, line), innermost first."""
    if tool == "binutils":
        cmd = ["addr2line", "-a", "-f", "-i", "-C", "-e", module]
    elif tool == "llvm":
        cmd = [os.environ.get("LLVM_SYMBOLIZER") or "llvm-symbolizer", "--output-style=GNU",
               "-a", "-f", "-i", "-C", "-e", module]
    else:
        cmd = ["eu-addr2line", "-a", "-f", "-i", "-C", "-e", module]
        if debug_dir:
            cmd[1:1] = ["--debuginfo-path=" + debug_dir]
    text = "\n".join("0x%x" % (o - 1) for o in offsets) + "\n"
    out = subprocess.run(cmd, input=text, capture_output=True, text=True).stdout
    chains, cur = [], None
    lines = out.splitlines()
    i = 0
    while i < len(lines):
        if re.match(r"^0x[0-9a-f]+$", lines[i]):
            # An address line (-a) starts the next chain.
            cur = []
            chains.append(cur)
            i += 1
            continue
        name, loc = lines[i], lines[i + 1] if i + 1 < len(lines) else "??:0"
        i += 2
        # elfutils names an inlined frame "NAME inlined at FILE:LINE:COL in CALLER".
        name = name.split(" inlined at ")[0]
        # binutils: FILE:LINE, maybe with " (discriminator N)"; elfutils: FILE:LINE:COLUMN.
        m = re.match(r"^(.*?):(\d+)(?::\d+)?(?: \(discriminator \d+\))?$", loc)
        path, line = (m.group(1), int(m.group(2))) if m else ("??", 0)
        base = None if path in ("??", "") or line == 0 else os.path.basename(path)
        cur.append((None if name == "??" else name, base, line if base else 0))
    if len(chains) != len(offsets):
        raise SystemExit("oracle.py: %s gave %d answers for %d addresses of %s"
                         % (cmd[0], len(chains), len(offsets), module))
    return chains


def agree(mine, theirs):
    """Frame for frame the same, except that rheap may qualify the bare DWARF name addr2line
    gives an inlined function that has no linkage name (g++'s inlined lambda is just
    "operator()"; rheap says "main::{lambda}::operator()")."""
    if len(mine) != len(theirs):
        return False
    for k, (m, t) in enumerate(zip(mine, theirs)):
        if m[1:] != t[1:]:
            return False
        if m[0] != t[0] and not (k + 1 < len(mine) and t[0] and "::" not in t[0]
                                 and m[0] and m[0].endswith("::" + t[0])):
            return False
    return True


def main(argv):
    binutils, llvm, alias, debug_dir, expect, db = set(), set(), {}, None, [], None
    args = iter(argv)
    for a in args:
        if a == "--binutils":
            binutils.add(next(args))
        elif a == "--llvm":
            llvm.add(next(args))
        elif a == "--as":
            k, _, v = next(args).partition("=")
            alias[k] = v
        elif a == "--debug-dir":
            debug_dir = next(args)
        elif a == "--expect-module":
            expect.append(next(args))
        else:
            db = a
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, ip_index, module, offset, sym, file, line FROM backtraces"
                       " WHERE module IS NOT NULL ORDER BY id, frame_no").fetchall()
    # The rows of one recorded address in one stack form its chain; every stack holding the
    # address must have the same chain, so the first one seen stands for them and the others
    # are checked against it.
    chains, ours, bad = {}, {}, 0
    for bt, ip, module, offset, sym, file, line in rows:
        base = os.path.basename(file) if file else None
        chains.setdefault((bt, ip), (module, offset, []))[2].append(
            (sym, base, (line or 0) if base else 0))
    for module, offset, chain in chains.values():
        prev = ours.setdefault((module, offset), chain)
        if prev != chain:
            bad += 1
            print("%s+0x%x: two stacks disagree:\n  %s\n  %s" % (module, offset, prev, chain))
    by_module = {}
    for (module, offset) in ours:
        by_module.setdefault(module, []).append(offset)
    frames = 0
    for module, offsets in sorted(by_module.items()):
        offsets.sort()
        tool = "binutils" if module in binutils else "llvm" if module in llvm else "elfutils"
        answers = oracle_chains(tool, alias.get(module, module), offsets, debug_dir)
        for offset, theirs in zip(offsets, answers):
            mine = ours[(module, offset)]
            frames += max(len(mine), len(theirs))
            if not agree(mine, theirs):
                bad += 1
                print("%s+0x%x:\n  rheap:     %s\n  addr2line: %s" % (module, offset, mine, theirs))
    print("oracle.py: %s: %d addresses, %d frames compared, %d addresses disagree"
          % (os.path.basename(db), len(ours), frames, bad))
    for m in expect:
        if m not in by_module:
            print("oracle.py: no frame of %s in %s" % (m, db))
            bad += 1
    return 1 if bad or not ours else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Which folders of src/ call which, as linked: the other half of the layer
check (tests/cli/folder_layers_test.cpp reads the includes). For each object
file of lostflops_core, the symbols it needs (`nm -u`) that an object of
another folder defines (`nm --defined-only`) are a call from its folder to
that one. Prints each folder's callees with the number of symbols, and every
call that goes up or sideways in the order of tests/data/folder_layers.txt
with the object and the symbol; exits 1 when there is one. A call the
includes do not show (a function a public header declares and a folder
above it defines) appears here.

usage: folder_links.py [BUILD_DIR]   (default build: its compile_commands.json
       names the objects; needs binutils' nm)
"""
import collections
import json
import os
import subprocess
import sys


def layers(table):
    order, section, n = {}, None, 0
    with open(table, encoding="utf-8") as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line.startswith("["):
                section = line
            elif line and section == "[layers]":
                for folder in line.split():
                    order[folder] = n
                n += 1
    return order


def nm(args, path):
    out = subprocess.run(["nm", "-C"] + args + [path], capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def core_objects(build):
    """(folder, object file) of each source of src/ in lostflops_core, from the
    build's compile_commands.json (objects of files since moved are not in it)."""
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        commands = json.load(f)
    prefix = "CMakeFiles/lostflops_core.dir/src/"
    for c in commands:
        words = c["command"].split()
        out = words[words.index("-o") + 1]
        if out.startswith(prefix):
            yield out[len(prefix):].split("/")[0], os.path.join(c["directory"], out)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
    order = layers(os.path.join(root, "tests", "data", "folder_layers.txt"))
    defined = collections.defaultdict(set)   # symbol -> folders
    needed = []                              # (folder, object, symbol)
    for folder, path in sorted(core_objects(build)):
        name = os.path.basename(path)
        for line in nm(["--defined-only", "-g"], path):
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[1] in "TDBRVW":
                defined[parts[2]].add(folder)
        for line in nm(["-u"], path):
            needed.append((folder, name, line.strip()[2:].strip()))
    calls = collections.defaultdict(lambda: collections.defaultdict(list))
    for folder, obj, symbol in needed:
        for callee in defined.get(symbol, ()):
            if callee != folder:
                calls[folder][callee].append((obj, symbol))
    bad = 0
    for folder in sorted(calls):
        print(folder, "->", ", ".join(f"{c} ({len(v)})" for c, v in sorted(calls[folder].items())))
        for callee, uses in sorted(calls[folder].items()):
            if order.get(callee, -1) < order.get(folder, -1):
                continue
            for obj, symbol in sorted(set(uses)):
                print(f"  against the order: {folder}/{obj} calls {callee}/: {symbol}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

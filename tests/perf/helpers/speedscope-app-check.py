#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare what the speedscope app showed of a profile (the app.json of
tests/perf/helpers/speedscope-app.js) with the profile file itself, for
tests/perf/test-demo.sh.  Standard library only; the screenshots are
decoded by ImageMagick (convert), as in flamegraph-check.py.

  speedscope-app-check.py PROFILE APP_JSON [--user FUNC...] [--stitched FUNC...]

prints "check NAME ok" or "check NAME -- WHAT DIFFERS" per check, and
"# ..." lines saying what the app drew:

  - loaded: the app fetched its files and the profile over HTTP (all 200),
    imported it (document title "NAME - speedscope", no alert, no
    exception), lists every profile (thread) of the file by name, starts
    at the file's activeProfileIndex, names each in its toolbar;
  - per profile, the Sandwich table: every frame of the profile, no other,
    with the Total and Self weights the file gives it (to the app's
    rounding);
  - per profile, the Left Heavy flame chart: the frames the app's hover
    tooltip named down the chart's left edge are the frames the file puts
    there (name, file, weight; laid out as speedscope does: the heaviest
    child first), to the last one there or MAX_ROWS; in its screenshot
    those rows are filled with colour over the width their weight gives
    them, different frames in different colours;
  - --user FUNC: FUNC is in a table as a user frame (not
    [kernel.kallsyms]) with samples;
  - per FUNC the app selected (speedscope-app.js FUNC...): the same of
    the two charts the app draws for it, its callers (FUNC up to the
    root) and its callees; --stitched FUNC: FUNC was selected, and the
    callee the app draws under FUNC and the functions inlined into it
    (frames of FUNC's own file) is a kernel frame: the user stack joined
    to its kernel stack.
"""

import importlib.util
import json
import os
import re
import sys
from collections import Counter

KERNEL = "[kernel.kallsyms]"


def load_flamegraph_check():
    """read_png of flamegraph-check.py, next to this file."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "flamegraph-check.py")
    sys.dont_write_bytecode = True      # no __pycache__ in the checkout
    spec = importlib.util.spec_from_file_location("flamegraph_check", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---------------------------------------------------------------- weights
TIME_UNITS = {"ns": 1, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9}


def parse_weight(text, unit):
    """(value, tolerance) in the profile's unit of what the app printed:
    speedscope's time formatter ("12.34ms", "1:05" past a minute) for
    nanoseconds, toLocaleString() ("1,234.5") for "none"; None if it
    cannot be read."""
    if unit == "nanoseconds":
        m = re.fullmatch(r"(\d+):(\d\d)", text)
        if m:
            return (int(m.group(1)) * 60 + int(m.group(2))) * 1e9, 1e9
        m = re.fullmatch(r"(\d+\.\d\d)(ns|\u00b5s|ms|s)", text)
        if m:
            scale = TIME_UNITS[m.group(2)]
            return float(m.group(1)) * scale, 0.0051 * scale
        return None
    if unit == "none":
        m = re.fullmatch(r"[\d,]+(\.\d+)?", text)
        if m:
            return float(text.replace(",", "")), 0.0011
        return None
    return None


def weight_ok(text, value, unit):
    got = parse_weight(text, unit)
    return got is not None and abs(got[0] - value) <= got[1] + 1e-6 * abs(value)


# ---------------------------------------------------------------- the file
class Node:
    __slots__ = ("frame", "total", "children")

    def __init__(self, frame):
        self.frame = frame
        self.total = 0
        self.children = {}

    def add(self, path, weight):
        node = self
        for f in path:
            node = node.children.setdefault(f, Node(f))
            node.total += weight


class Profile:
    """One profile of the file, as speedscope reads it."""

    def __init__(self, doc, p):
        self.frames = doc["shared"]["frames"]
        self.name = p["name"]
        self.unit = p.get("unit", "none")
        self.samples = [(s, w) for s, w in zip(p["samples"], p["weights"]) if s and w]
        self.total = Counter()
        self.self = Counter()
        self.tree = Node(None)
        for stack, w in self.samples:
            for f in set(stack):
                self.total[f] += w
            self.self[stack[-1]] += w
            self.tree.add(stack, w)

    def label(self, f):
        return (self.frames[f]["name"], self.frames[f].get("file", ""))

    def callers(self, func):
        """speedscope's callers of frame FUNC: each stack from its
        outermost FUNC up to the root, FUNC first"""
        tree = Node(None)
        for stack, w in self.samples:
            if func in stack:
                tree.add(reversed(stack[:stack.index(func) + 1]), w)
        return tree

    def callees(self, func):
        """and its callees: each stack from its outermost FUNC on"""
        tree = Node(None)
        for stack, w in self.samples:
            if func in stack:
                tree.add(stack[stack.index(func):], w)
        return tree


def follow(prof, tree, col, max_rows):
    """'' when COL, a column of the app's chart of TREE (frames: [name,
    file, weight, percent] per row as the app's tooltip said them,
    offset: the column's x in the chart, width: the chart's, both in
    px), holds the frames the file puts there, else what differs.  The
    chart as speedscope lays it out: TREE's total across the width, the
    children of a frame from its left edge on, the heaviest first (ties in
    the order they first occur); a pixel's leeway at their edges."""
    shown = col.get("frames") or []
    if not shown:
        return "nothing under the mouse"
    if not col.get("width"):
        return "no chart canvas under the mouse"
    total = sum(c.total for c in tree.children.values())
    per_px = total / col["width"]
    x, tol = col["offset"] * per_px, per_px
    node, start = tree, 0.0
    for row in range(len(shown) + 1):
        under, end = [], start
        for child in sorted(node.children.values(), key=lambda c: -c.total):
            if end - tol <= x < end + child.total + tol:
                under.append((child, end))
            end += child.total
        there = ", ".join("%s (%s)" % prof.label(c.frame) for c, _ in under) or "nothing"
        if row == len(shown):
            # past the last row read: nothing there, or the rows read were all
            if row >= max_rows or x >= end - tol:
                return ""
            return "the app draws nothing at row %d, the file has %s there" % (row, there)
        name, file, weight, _pct = shown[row]
        match = [(c, s) for c, s in under if prof.label(c.frame) == (name, file)]
        if not match:
            return "row %d: the app draws %s (%s), the file has %s there" % (
                row, name, file or "no file", there)
        node, start = match[0]
        if not weight_ok(weight, node.total, prof.unit):
            return "row %d: %s weighs %s in the app, %d in the file" % (
                row, name, weight, node.total)
    return ""


# ---------------------------------------------------------------- checks
results = []


def check(name, problem):
    """PROBLEM: '' (or None) when the check passed, else what failed"""
    results.append("check %s %s" % (name, "ok" if not problem else "-- " + problem))


def say(line):
    results.append("# " + line)


def table_problems(prof, rows):
    """The Sandwich table against the profile's frames: '' or what differs"""
    want = Counter()
    for f in prof.total:
        want[prof.label(f)] += 1
    got = Counter((r[2], r[3] or "") for r in rows)
    missing = want - got
    extra = got - want
    bad = []
    by_label = {}
    for f in prof.total:
        by_label.setdefault(prof.label(f), []).append(f)
    for total, self_w, name, file in rows:
        frames = by_label.get((name, file or ""), [])
        if frames and not any(weight_ok(total, prof.total[f], prof.unit) and
                              weight_ok(self_w, prof.self[f], prof.unit) for f in frames):
            f = frames[0]
            bad.append("%s: Total %s Self %s, the file %d %d" % (
                name, total, self_w, prof.total[f], prof.self[f]))
    out = []
    if missing:
        out.append("%d frames missing (%s)" % (sum(missing.values()),
                                               ", ".join(n for n, _ in list(missing)[:3])))
    if extra:
        out.append("%d frames not in the file (%s)" % (sum(extra.values()),
                                                      ", ".join(n for n, _ in list(extra)[:3])))
    if bad:
        out.append("%d weights differ (%s)" % (len(bad), "; ".join(bad[:3])))
    return "; ".join(out)


ROW_PX = 20      # the height of a row of speedscope's flame charts


def clear_colour(r, g, b):
    """not white, grey or black: a frame's fill, not text or background"""
    return max(r, g, b) - min(r, g, b) >= 24


def drawn_problems(prof, col, png):
    """'' when the screenshot PNG of the Left Heavy chart has the frames of
    COL, the column the app's tooltips read at its left edge, drawn as the
    file says: row by row, the heaviest child of the row above from the
    chart's left edge on, as wide as its share of the profile's weight,
    filled with colour over most of that width; and rows of different
    frames in different colours.  What is expected comes from the file,
    not from what one run drew."""
    shown = col.get("frames") or []
    if not shown or not col.get("width") or col.get("y") is None:
        return "no frame under the mouse to find the chart by"
    try:
        width, height, bpp, rows = load_flamegraph_check().read_png(png)
    except SystemExit as err:
        return str(err)
    total = sum(c.total for c in prof.tree.children.values())
    left = 3 - col["offset"]            # the column was read at x = 3
    node, problems, colours, keys = prof.tree, [], set(), set()
    for i in range(len(shown)):
        if not node.children:
            break
        node = sorted(node.children.values(), key=lambda c: -c.total)[0]
        span = node.total / total * col["width"]
        # the row's top is at most 8 px above where the tooltip was found
        top = col["y"] + ROW_PX * i
        x0, x1 = max(0, int(left) + 1), min(width, int(left + span) - 1)
        if x1 - x0 < 4 or top + 12 > height:
            break
        buckets = Counter()
        for line in rows[top:top + 12]:
            for x in range(x0, x1):
                r, g, b = line[x * bpp], line[x * bpp + 1], line[x * bpp + 2]
                if clear_colour(r, g, b):
                    buckets[(r >> 4, g >> 4, b >> 4)] += 1
        filled = sum(buckets.values()) / (12 * (x1 - x0))
        if filled < 0.5:
            problems.append("row %d (%s, %d px wide): %d%% coloured" % (
                i, prof.label(node.frame)[0], x1 - x0, filled * 100))
        elif prof.label(node.frame) not in keys:
            keys.add(prof.label(node.frame))
            colours.add(buckets.most_common(1)[0][0])
    if not keys and not problems:
        return "no row of the chart wide enough to look at"
    if len(keys) >= 2 and len(colours) < 2:
        problems.append("%d different frames, all in one colour" % len(keys))
    return "; ".join(problems)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    doc = json.load(open(argv[1], encoding="utf-8"))
    app = json.load(open(argv[2], encoding="utf-8"))
    user, stitched, dest = [], [], None
    for arg in argv[3:]:
        if arg in ("--user", "--stitched"):
            dest = user if arg == "--user" else stitched
        elif dest is None:
            sys.exit(__doc__)
        else:
            dest.append(arg)
    wanted = list(dict.fromkeys(user + stitched))
    profiles = [Profile(doc, p) for p in doc["profiles"]]
    max_rows = app.get("max_rows", 16)

    # ---- loading
    reqs = app.get("requests", [])
    profile_path = "/" + os.path.basename(argv[1])
    fetched = sum(r[1] == profile_path for r in reqs)
    check("loaded over http://127.0.0.1 (every request 200, the profile fetched once)",
          "; ".join(["%s %s: %d" % tuple(r) for r in reqs if r[2] != 200] +
                    ([] if fetched == 1 else ["%s fetched %d times" % (profile_path, fetched)])))
    check("imported (document title \"%s - speedscope\", no alert, no exception)" % doc.get("name"),
          "; ".join(([] if app.get("document_title") == "%s - speedscope" % doc.get("name") else
                     ["title %r" % app.get("document_title")]) +
                    ["alert: " + d for d in app.get("dialogs", [])] +
                    ["exception: " + e.splitlines()[0] for e in app.get("exceptions", [])]))
    shown = app.get("shown") or {}
    check("the app has the file's %d profiles" % len(profiles),
          "" if shown.get("n") == len(profiles) else "it has %s" % shown.get("n"))
    active = doc.get("activeProfileIndex", 0) + 1
    check("the app opens profile %d (activeProfileIndex, the heaviest thread)" % active,
          "" if shown.get("i") == active else "it opens %s" % shown.get("i"))
    names = [r[1] for r in app.get("profile_list", [])]
    check("the app's profile list names the threads",
          "" if names == [p.name for p in profiles] else "it lists %s" % names)
    seen = app.get("profiles", [])
    check("the app showed every profile", "" if len(seen) == len(profiles) else
          "%d of %d" % (len(seen), len(profiles)))

    # ---- each profile
    found = {}
    for prof, got in zip(profiles, seen):
        i = got["index"]
        what = "profile %d (%s)" % (i, prof.name)
        check("%s: toolbar" % what, "" if got["toolbar"] == "%s (%d/%d)" % (
            prof.name, i, len(profiles)) else "it says %r" % got["toolbar"])
        check("%s: Sandwich table = the file's %d frames, Total and Self" % (what, len(prof.total)),
              table_problems(prof, got["table"]))
        check("%s: Left Heavy chart, its left edge = the file's frames there" % what,
              follow(prof, prof.tree, got["heaviest"], max_rows))
        say("%s, heaviest stack drawn: %s" % (what, " > ".join(
            f[0] + ("" if f[1] != KERNEL else "[k]") for f in got["heaviest"]["frames"])))
        check("%s: screenshot: the heaviest stack's frames drawn, as wide as their weight, "
              "in colours" % what, drawn_problems(prof, got["heaviest"], got["png"]))
        for total, _self, name, file in got["table"]:
            if name in wanted and file != KERNEL and parse_weight(total, prof.unit) and \
                    parse_weight(total, prof.unit)[0] > 0:
                found.setdefault(name, []).append(what)
        for func, charts in sorted(got.get("selected", {}).items()):
            frames = [f for f in prof.total if prof.label(f)[0] == func and
                      prof.label(f)[1] != KERNEL]
            if not charts or not frames:
                check("%s: %s selected" % (what, func), "the app could not select it")
                continue
            f = frames[0]
            check("%s: %s's callers chart, its left edge = the file's" % (what, func),
                  follow(prof, prof.callers(f), charts["callers"], max_rows))
            check("%s: %s's callees chart, its left edge = the file's" % (what, func),
                  follow(prof, prof.callees(f), charts["callees"], max_rows))
            say("%s: %s, callers: %s; callees: %s" % (
                what, func, " < ".join(c[0] for c in charts["callers"]["frames"]),
                " > ".join(c[0] + ("" if c[1] != KERNEL else "[k]")
                           for c in charts["callees"]["frames"])))
            if func in stitched:
                # under FUNC: the functions inlined into it (frames of its
                # file, as perf script shows them), then the kernel's
                callees = charts["callees"]["frames"]
                own = callees[0][1] if callees else None
                rest = [c for c in callees[1:]]
                while rest and rest[0][1] == own and own != KERNEL:
                    rest.pop(0)
                under = rest[0] if rest else None
                check("%s: %s stitched: the app draws a kernel frame under it" % (what, func),
                      "" if under and under[1] == KERNEL else
                      "under it: %s" % ("%s (%s)" % (under[0], under[1] or "no file")
                                        if under else "nothing"))
    for func in wanted:
        check("%s: a user frame with samples in the app" % func,
              "" if func in found else "in no profile's table")
        if func in stitched:
            check("%s: selected in the app" % func, "" if any(
                func in (g.get("selected") or {}) and g["selected"][func] for g in seen)
                  else "never selected")
    print("\n".join(results))


if __name__ == "__main__":
    main(sys.argv)

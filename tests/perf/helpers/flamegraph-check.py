#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Look inside a flame graph that perf script report flamegraph wrote with
d3-flame-graph's template, and inside what Chromium made of it, for
tests/perf/test-demo.sh and test-script-report.sh.  Standard library only; the
PNG is decoded by ImageMagick (convert), a make deps package.

  flamegraph-check.py stacks HTML|JSON [FUNC...]
      the stacks JSON embedded in HTML (or a .json file of flamegraph.py
      -f json): "total N" (samples), "lost N"
      (samples under "[user stack lost: ...]" frames), "lost_libtypes L,.."
      (their libtypes, "user" for ""; "-" without such frames),
      then per FUNC "func FUNC user_samples N kernel_below N": samples in
      user frames named FUNC and, of those, samples that go on into kernel
      frames (a user stack stitched to a kernel stack)
  flamegraph-check.py offline HTML
      "fetched N" and one line per reference that a browser would fetch
      from the network (script/img/iframe src, link href, CSS url() and
      @import, fetch/XMLHttpRequest/import() of an http(s) URL), then
      "other_urls N": http(s) strings that are not fetched (XML namespaces)
  flamegraph-check.py png PNG
      "size W H", then pixel counts: "kernel N", "user N", "red N"
      (template colours: kernel blue, user green, the red of "all" and of
      lost user stacks), "flame N" (their sum)
  flamegraph-check.py dom DOM HTML
      the frames (<g class="frame"><rect fill=...>) of Chromium's
      --dump-dom output, checked against the libtypes of HTML's stacks:
      "frames N", "kernel N ok N", "user N ok N", "lost N ok N" (frames
      of that libtype and how many have that libtype's colour),
      "shared_fills N" (fills used by both kernel and user frames)
"""

import html.parser
import json
import re
import subprocess
import sys

LOST_PREFIX = "[user stack lost: "


def load_stacks(path):
    text = open(path, encoding="utf-8").read()
    if path.endswith(".json"):          # flamegraph.py -f json: the stacks alone
        try:
            return json.loads(text)
        except ValueError as err:
            sys.exit("%s: not JSON: %s" % (path, err))
    marker = "const stacks = ["
    at = text.find(marker)
    if at < 0:
        sys.exit("%s: no 'const stacks = [' (not a d3-flamegraph-base.html page)" % path)
    try:
        stacks, _ = json.JSONDecoder().raw_decode(text, at + len(marker))
    except ValueError as err:
        sys.exit("%s: the embedded stacks are not JSON: %s" % (path, err))
    return stacks


def total(node):
    return node["v"] + sum(total(c) for c in node["c"])


def walk(node, parents=()):
    yield node, parents
    for child in node["c"]:
        yield from walk(child, parents + (node,))


def kernel_part(node):
    """Samples below node that end in the kernel: the totals of the
    outermost kernel frames under it."""
    return sum(total(c) if c["l"] == "kernel" else kernel_part(c) for c in node["c"])


def cmd_stacks(path, funcs):
    root = load_stacks(path)
    print("total", total(root))
    lost = [n for n, _ in walk(root) if n["n"].startswith(LOST_PREFIX)]
    print("lost", sum(total(n) for n in lost))
    # "" (the user libtype) shows as "user"
    print("lost_libtypes", ",".join(sorted({n["l"] or "user" for n in lost})) or "-")
    for func in funcs:
        user = [n for n, _ in walk(root) if n["n"] == func and n["l"] == ""]
        below = sum(kernel_part(n) for n in user)
        print("func %s user_samples %d kernel_below %d"
              % (func, sum(total(n) for n in user), below))


class Fetches(html.parser.HTMLParser):
    """References a browser fetches when it loads the page."""

    ATTRS = {"script": "src", "img": "src", "iframe": "src", "embed": "src",
             "source": "src", "audio": "src", "video": "src", "link": "href",
             "object": "data", "image": "href"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.fetched = []
        self.scripts = []
        self.in_script = False

    def handle_starttag(self, tag, attrs):
        want = self.ATTRS.get(tag)
        for name, value in attrs:
            if value and (name == want or (tag == "image" and name == "xlink:href")):
                self.fetched.append("<%s %s=%s>" % (tag, name, value))
            if name == "style" and value and re.search(r"url\(|@import", value):
                self.fetched.append("<%s style=%s>" % (tag, value))
        self.in_script = tag in ("script", "style")

    def handle_endtag(self, tag):
        self.in_script = False

    def handle_data(self, data):
        if self.in_script:
            self.scripts.append(data)


REMOTE = r"""(?:https?:)?//[^\s"'`)]+"""
FETCHING_CODE = [
    r"""url\(\s*["']?(%s)""" % REMOTE,
    r"""@import\s+(?:url\()?\s*["']?(%s)""" % REMOTE,
    r"""fetch\(\s*["'`](%s)""" % REMOTE,
    r"""\.open\(\s*["'`][A-Z]+["'`]\s*,\s*["'`](%s)""" % REMOTE,
    r"""import\(\s*["'`](%s)""" % REMOTE,
    r"""\.src\s*=\s*["'`](%s)""" % REMOTE,
]
# namespace names, never fetched
NAMESPACES = {
    "http://www.w3.org/1999/xhtml", "http://www.w3.org/1999/xlink",
    "http://www.w3.org/2000/svg", "http://www.w3.org/2000/xmlns/",
    "http://www.w3.org/XML/1998/namespace",
}


def cmd_offline(path):
    text = open(path, encoding="utf-8").read()
    parser = Fetches()
    parser.feed(text)
    parser.close()
    fetched = list(parser.fetched)
    for code in parser.scripts:
        urls = {m.start(1): m.group(1) for pattern in FETCHING_CODE
                for m in re.finditer(pattern, code)}
        fetched += ["code: " + urls[at] for at in sorted(urls)]
    others = [u for u in re.findall(r"https?://[^\s\"'`)<>]+", text)
              if not any(u in f for f in fetched)]
    unknown = [u for u in others if u not in NAMESPACES]
    print("fetched", len(fetched))
    for ref in fetched:
        print("  fetch", ref)
    print("other_urls", len(others))
    # an URL that is neither fetched by a known construct nor a namespace
    # name: report it, so that a new way of loading is not missed silently
    print("unknown_urls", len(unknown))
    for url in unknown:
        print("  unknown", url)


def read_png(path):
    """The PNG's pixels as RGB rows, decoded by ImageMagick (a make deps
    package) into a binary PPM: width, height, 3, [row bytes]."""
    try:
        out = subprocess.run(["convert", path, "-alpha", "off", "-depth", "8", "ppm:-"],
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        sys.exit("%s: ImageMagick cannot read it: %s" % (path, err))
    fields, pos = [], 0
    while len(fields) < 4:              # "P6", width, height, maxval
        while out[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while end < len(out) and not out[end:end + 1].isspace():
            end += 1
        fields.append(out[pos:end])
        pos = end
    pos += 1                            # the one whitespace byte before the pixels
    if fields[0] != b"P6" or fields[3] != b"255":
        sys.exit("%s: ImageMagick wrote no 8-bit PPM" % path)
    width, height = int(fields[1]), int(fields[2])
    stride = width * 3
    if len(out) - pos != height * stride:
        sys.exit("%s: %d bytes of pixels, expected %d" % (path, len(out) - pos, height * stride))
    return width, height, 3, [out[pos + y * stride:pos + (y + 1) * stride] for y in range(height)]


# The template's "blue-green" scheme (d3-flame-graph 4.1.3): kernel frames
# rgb(91..217, 156..232, 221..247), user frames rgb(163..238, 195..244,
# 72..221), "all" (and lost user stacks) rgb(217,75,75); drawn with
# fill-opacity .8 on white.  The classes below hold for every shade of
# each range, before and after that blend, and exclude white and greys.
def colour_class(r, g, b):
    if b >= 200 and b - r >= 16 and b - g >= 8:
        return "kernel"
    if g >= 180 and g > r and g - b >= 12:
        return "user"
    if r >= 200 and r - g >= 80 and r - b >= 80 and abs(g - b) <= 4:
        return "red"
    return None


def cmd_png(path):
    width, height, bpp, rows = read_png(path)
    counts = {"kernel": 0, "user": 0, "red": 0}
    for line in rows:
        for x in range(0, width * bpp, bpp):
            cls = colour_class(line[x], line[x + 1], line[x + 2])
            if cls:
                counts[cls] += 1
    print("size", width, height)
    for cls in ("kernel", "user", "red"):
        print(cls, counts[cls])
    print("flame", sum(counts.values()))


class Frames(html.parser.HTMLParser):
    """(name, fill) of every d3-flame-graph frame in a dumped DOM."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.frames = []
        self.pending = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "g" and "frame" in (attrs.get("class") or "").split():
            self.pending = attrs.get("name")
        elif tag == "rect" and self.pending is not None:
            self.frames.append((self.pending, attrs.get("fill")))
            self.pending = None


def fill_class(fill):
    m = re.fullmatch(r"rgb\((\d+),\s*(\d+),\s*(\d+)\)", fill or "")
    if not m:
        return None
    r, g, b = (int(v) for v in m.groups())
    if (r, g, b) == (217, 75, 75):
        return "lost"
    cls = colour_class(r, g, b)
    return cls if cls != "red" else None


def cmd_dom(dom_path, html_path):
    libtypes = {}
    for node, _ in walk(load_stacks(html_path)):
        libtypes.setdefault(node["n"], set()).add(node["l"])
    parser = Frames()
    parser.feed(open(dom_path, encoding="utf-8").read())
    parser.close()
    kinds = {"kernel": [0, 0], "user": [0, 0], "lost": [0, 0]}
    fills = {"kernel": set(), "user": set()}
    for name, fill in parser.frames:
        types = libtypes.get(name, set())
        if name == "all" or len(types) != 1:
            continue            # the root, or a name with two libtypes
        kind = {"kernel": "kernel", "": "user", "root": "lost"}.get(types.pop())
        if kind is None:
            continue
        kinds[kind][0] += 1
        kinds[kind][1] += fill_class(fill) == kind
        if kind in fills:
            fills[kind].add(fill)
    print("frames", len(parser.frames))
    for kind in ("kernel", "user", "lost"):
        print(kind, kinds[kind][0], "ok", kinds[kind][1])
    print("shared_fills", len(fills["kernel"] & fills["user"]))


def main(argv):
    if len(argv) >= 3 and argv[1] == "stacks":
        cmd_stacks(argv[2], argv[3:])
    elif len(argv) == 3 and argv[1] == "offline":
        cmd_offline(argv[2])
    elif len(argv) == 3 and argv[1] == "png":
        cmd_png(argv[2])
    elif len(argv) == 4 and argv[1] == "dom":
        cmd_dom(argv[2], argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)

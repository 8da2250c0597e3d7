"""Random `template` expressions (paths and filter chains with arguments)
over awkward items, run by both. Left out on purpose: property names of
`String.prototype` (`"text".big` is a function in JavaScript) and strings
V8's legacy `Date` parser reads as dates (`"2.5"` is 5 February 2001)."""

import json
import os
import random
import sys
import tempfile

from common import both, show

ITEMS = [{"s": "  Hello, World  ", "n": 3.14159, "i": 42, "neg": -0.5, "huge": 1e21, "arr": ["a", "b", "c"], "o": {"k": "v"},
          "e": "", "z": None, "t": True, "d": 1700000000123, "ds": "1700000000123", "csv": "x,y,,z", "u": "ünï",
          "q": 'say "hi"'},
         {"s": "x", "arr": [], "n": "2.5 apples", "d": "not a date"},
         "plain string", 7, None, ["a", "b"]]
PATHS = [".", "this", "s", "n", "i", "neg", "huge", "arr", "arr.0", "arr.5", "o", "o.k", "e", "z", "t", "d", "ds", "csv", "u",
         "q", "missing", "arr.length", "s.length"]
FILTERS = ["upper", "lower", "trim", "truncate 5", "truncate", "truncate abc", 'replace "l" "L"', "replace l", "split",
           'split ","', "split ' '", "first", "last", "length", "join", 'join "-"', "json", "string", "default fallback",
           'default "two words"', "round", "round 2", "round -1", "date", "date YYYY-MM-DD", "date HH:mm:ss YYYY", "bogus"]


def expr(rnd):
    filters = [rnd.choice(FILTERS) for _ in range(rnd.randint(0, 3))]
    # `date` only first: later it sees strings made by other filters, which
    # V8's legacy parser reads as dates ("42" is the year 2042).
    filters = [f for i, f in enumerate(filters) if i == 0 or not f.startswith("date")]
    return "{{ " + " | ".join([rnd.choice(PATHS)] + filters) + " }}"


def main(seed, count):
    rnd, bad = random.Random(seed), 0
    for _ in range(count):
        text = " ".join(expr(rnd) for _ in range(rnd.randint(1, 2)))
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "data.json"), "w") as f:
                json.dump(ITEMS, f)
            with open(os.path.join(d, "t.txt"), "w") as f:
                f.write(text)
            ref, ours = both(["run", "--mode", "tool", "exec --json cat data.json | template --file t.txt"], d, d)
            if ref != ours:
                bad += 1
                show(text, ref, ours)
    print(f"templates: {bad} differences in {count}")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main(int(sys.argv[1]), int(sys.argv[2])) else 0)

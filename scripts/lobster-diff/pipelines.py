"""Random pipelines over awkward data (loose comparisons, missing fields,
numeric strings, nesting), run in tool and human mode by both."""

import json
import os
import random
import sys
import tempfile

from common import both, show

DATA = [
    [{"a": 1, "b": "x"}, {"a": 10, "b": "y"}, {"a": "10", "b": "z"}, {"a": None}, {"b": "w"}, {"a": True},
     {"a": 2.5}, {"a": "abc"}, {"a": ""}, {"a": [1, 2]}, {"a": {"c": 1}}],
    [{"n": {"m": 3}, "s": "Hello"}, {"n": {"m": "3"}, "s": "hello"}, {"n": {}, "s": "ä"}, {"n": None, "s": None}, {"s": 5}],
    [1, "1", None, True, False, 0, "", [], {}, "a b", -1, 1e21, 0.1],
    [{"id": 3, "t": "b"}, {"id": 1, "t": "a"}, {"id": 2, "t": "b"}, {"id": 1, "t": "c"}, {"id": None, "t": "a"}],
    [],
    [{"k": "2024-01-02"}, {"k": "2023-12-31"}, {"k": "10"}, {"k": "9"}, {"k": 9}, {"k": -0.0}],
    [{"a": " 10 ", "b": "x\ny"}, {"a": "0x10", "b": "é"}, {"a": "Infinity", "b": "B"}, {"a": "1e3", "b": "a"},
     {"a": [], "b": "Z"}, {"a": [5], "b": "10"}, {"a": "", "b": "2"}],
    [[1, 2], [], ["a"], {"a": [1, {"b": 2}]}, "text\twith tab", 3.14159, -0.5, 12345678901234567890],
    [{"id": 1, "tags": ["x", "y"], "n": {"m": [1, 2]}}, {"id": 2, "tags": [], "n": {"m": []}},
     {"id": 1, "tags": ["x", "y"], "n": {"m": [1, 2]}}],
]
# Enough mixed numbers and strings that `sort` merges runs and gallops,
# where a comparator that is not a total order shows the sort algorithm.
_mixed = random.Random(7)
DATA.append([{"a": _mixed.choice([_mixed.randint(0, 99), str(_mixed.randint(0, 99)), None, _mixed.random() * 9]),
              "id": i} for i in range(300)])
FIELDS = ["a", "b", "n.m", "s", "id", "t", "k", "missing", "n", "a.c", "tags", "tags.0", "n.m.1", "a.0", "length", "0"]
VALUES = ["1", "10", "'10'", "true", "false", "null", "abc", "''", "2.5", "-1", "x", "Hello", "a", "1e1", "0"]
OPS = ["=", "==", "!=", "<", "<=", ">", ">="]


def stage(rnd):
    r, f = rnd.random(), rnd.choice(FIELDS)
    if r < 0.3:
        return f"where {f}{rnd.choice(OPS)}{rnd.choice(VALUES)}"
    if r < 0.38:
        return "pick " + ",".join(rnd.sample(FIELDS, rnd.randint(1, 3)))
    if r < 0.48:
        return f"sort --key {f}" + rnd.choice(["", " --desc"]) if rnd.random() < 0.8 else "sort" + rnd.choice(["", " --desc"])
    if r < 0.55:
        return rnd.choice([f"dedupe --key {f}", "dedupe"])
    if r < 0.62:
        return f"groupBy --key {f}"
    if r < 0.7:
        return "head --n " + rnd.choice(["0", "1", "2", "-1", "2.5", "abc", "100"])
    if r < 0.8:
        return rnd.choice([f"map --wrap {f}", f"map x={{{{{f}}}}}", "map x=1 y=z", "map --wrap w x=1"])
    if r < 0.9:
        return rnd.choice([f"template --text '{{{{{f}}}}}-{{{{.}}}}'", f"template --text 'v={{{{{f}}}}}'", "template --text '{{.}}'"])
    if r < 0.95:
        return rnd.choice(["json", "table", "exec --stdin jsonl cat", "exec --stdin raw cat", "exec --stdin json --json cat",
                           f"groupBy --key {f} | json", f"dedupe --key {f} | sort --key {f}"])
    return rnd.choice([f"template --text '{{{{{f} | upper}}}}'", f"template --text '{{{{{f} | json}}}}'", "head", "sort --desc", f"where {f}"])


def main(seed, count):
    rnd, bad = random.Random(seed), 0
    for _ in range(count):
        data = rnd.choice(DATA)
        line = " | ".join(["exec --json cat data.json"] + [stage(rnd) for _ in range(rnd.randint(1, 3))])
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "data.json"), "w") as f:
                json.dump(data, f)
            for argv in (["run", "--mode", "tool", line], [line]):
                # Tool mode: stderr is not part of the contract.
                ref, ours = both(argv, d, d, stderr=argv[0] != "run")
                if ref != ours:
                    bad += 1
                    show(f"{argv[:-1]} {line}  data={json.dumps(data)[:120]}", ref, ours)
    print(f"pipelines: {bad} differences in {count}")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main(int(sys.argv[1]), int(sys.argv[2])) else 0)

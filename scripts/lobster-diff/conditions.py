"""Random `when:` expressions and `$step.path` templates in a two-step
workflow, run in tool mode by both."""

import json
import os
import random
import sys
import tempfile

from common import both, show

A_JSON = {"x": 1, "s": "10", "t": True, "n": None, "arr": [1, "b", {"c": 2}], "o": {"p": "q"}, "e": "", "z": 0, "f": 1.5}
REFS = ["$a.json.x", "$a.json.s", "$a.json.t", "$a.json.n", "$a.json.arr", "$a.json.arr.0", "$a.json.arr.2.c", "$a.json.o",
        "$a.json.o.p", "$a.json.e", "$a.json.z", "$a.json.missing", "$a.stdout", "$a.skipped", "$b.skipped", "$a.json.f",
        "$a.approved", "$a.json"]
LITS = ["1", "0", "10", "'10'", '"10"', "true", "false", "null", "'a b'", "1.5", "-1", "'q'", "''", '"x\\"y"', "2.0"]
OPS = ["==", "!=", "<", "<=", ">", ">="]


def expr(rnd, depth=0):
    def prim(right=False):
        r = rnd.random()
        if r < 0.5:
            return rnd.choice(REFS)
        if r < 0.85:
            return rnd.choice(LITS)
        return rnd.choice(["q", "abc", "x1"] if right else ["abc", "(1)", "01"])
    r = rnd.random()
    if depth < 2 and r < 0.2:
        return f"{expr(rnd, depth + 1)} && {expr(rnd, depth + 1)}"
    if depth < 2 and r < 0.35:
        return f"{expr(rnd, depth + 1)} || {expr(rnd, depth + 1)}"
    if depth < 2 and r < 0.42:
        return f"!({expr(rnd, depth + 1)})"
    if depth < 2 and r < 0.48:
        return f"({expr(rnd, depth + 1)})"
    if rnd.random() < 0.6:
        return f"{prim()} {rnd.choice(OPS)} {prim(True)}"
    return ("!" if rnd.random() < 0.3 else "") + prim()


def main(seed, count):
    rnd, bad = random.Random(seed), 0
    for _ in range(count):
        cond, tmpl = expr(rnd), rnd.choice(REFS)
        wf = {"name": "d", "steps": [
            {"id": "a", "run": "printf '%s' '" + json.dumps(A_JSON) + "'"},
            {"id": "b", "run": "printf 'ran:%s' \"" + tmpl + "\"", "when": cond},
        ]}
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "w.lobster"), "w") as f:
                json.dump(wf, f)
            ref, ours = both(["run", "--mode", "tool", "w.lobster"], d, d)
            if ref != ours:
                bad += 1
                show(f"when: {cond} | template: {tmpl}", ref, ours)
    print(f"conditions: {bad} differences in {count}")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main(int(sys.argv[1]), int(sys.argv[2])) else 0)

"""Random pipeline text: quoting, escapes, `=` and spaced flags, pipes in
quotes, empty stages. Argument splitting is shown by `exec printf`, flag
parsing by `template` and `head`; both implementations run each."""

import os
import random
import sys
import tempfile

from common import OURS, REF, as_json, run, show

ATOMS = ["a", "b c", "'q'", '"dq"', "'it''s'", '"a\\"b"', "'a\\'b'", "x|y", "'x|y'", '"x|y"', "--n", "--n=2", "--n 3", "--flag",
         "=", "--=x", "-x", "é", "\\\\", "\\ ", "''", '""', "'a'b", 'a"b"c', "--x=", "--x='v w'", "tab\tsep", "  "]


def line(rnd):
    words = " ".join(rnd.choice(ATOMS) for _ in range(rnd.randint(1, 4)))
    return rnd.choice([
        f"exec printf '%s\\n' {words}",
        f"exec --json echo [1,2,3] | head {words}",
        f"exec --json echo [1] | template {words}",
        f"exec --json echo [1] | template --text {words}",
        f"exec printf '%s\\n' {words} | {rnd.choice(['json', 'head --n 1', ''])}",
    ])


def main(seed, count):
    rnd, bad = random.Random(seed), 0
    for _ in range(count):
        text = line(rnd)
        with tempfile.TemporaryDirectory() as d:
            argv = ["run", "--mode", "tool", text]
            ref, ours = run(REF, argv, d, os.path.join(d, "h1")), run(OURS, argv, d, os.path.join(d, "h2"))
            ref, ours = (ref[0], as_json(ref[1])), (ours[0], as_json(ours[1]))
            if ref != ours:
                bad += 1
                show(repr(text), ref, ours)
    print(f"grammar: {bad} differences in {count}")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main(int(sys.argv[1]), int(sys.argv[2])) else 0)

"""Random pipeline text: quoting, escapes, `=` and spaced flags, pipes in
quotes, empty stages. Argument splitting is shown by `exec printf`, flag
parsing by `template` and `head`; both implementations run each."""

import random
import sys
import tempfile

from common import both, show

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
            ref, ours = both(["run", "--mode", "tool", text], d, d)
            if ref != ours:
                bad += 1
                show(repr(text), ref, ours)
    print(f"grammar: {bad} differences in {count}")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main(int(sys.argv[1]), int(sys.argv[2])) else 0)

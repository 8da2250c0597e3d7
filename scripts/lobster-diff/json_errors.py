"""Malformed JSON on a command's stdout (`exec --json`): valid documents
with a character deleted, inserted or replaced, run in tool mode by both,
so the error message Lobster passes on from V8's JSON.parse is compared.

One difference is known and counted apart: when the unexpected token is
half of a character outside the BMP, Lobster prints that lone surrogate;
our strings are UTF-8 and print U+FFFD (docs/lobster.md)."""

import json
import os
import random
import sys
import tempfile

from common import both, show

DOCS = ['[{"a":1,"b":"x"},{"a":2.5e-3,"c":[true,false,null]}]', '{"k":"v","n":-12,"s":"t\\u00e9\\n"}', '[1,2,3,4,5,6,7,8,9,10,11,12]',
        '"just a string"', '  [ "spaced" ,  { "o" : { } } ]  ', '[\n  {"line": 1},\n  {"line": 2}\n]', '-0.5E+10', '{"emoji":"\U0001F600"}']
NOISE = list('{}[]",:-+.eE0123456789 \t\nabtfnrux\\') + ["\u00e9", "\u00a0", "\U0001F600", "\r"]


def mutate(rnd, doc):
    chars = list(doc)
    for _ in range(rnd.choice([1, 1, 1, 2])):
        i = rnd.randrange(len(chars) + 1)
        op = rnd.random()
        if op < 0.35 and chars:
            del chars[min(i, len(chars) - 1)]
        elif op < 0.7:
            chars.insert(i, rnd.choice(NOISE))
        elif chars:
            chars[min(i, len(chars) - 1)] = rnd.choice(NOISE)
    return "".join(chars)


def lone_surrogate(result):
    return any(0xD800 <= ord(c) <= 0xDFFF for c in json.dumps(result, ensure_ascii=False))


def main(seed, count):
    rnd, bad, known = random.Random(seed), 0, 0
    for _ in range(count):
        text = mutate(rnd, rnd.choice(DOCS))
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "out.json"), "w", encoding="utf-8") as f:
                f.write(text)
            ref, ours = both(["run", "--mode", "tool", "exec --json --shell 'cat out.json'"], d, d)
            if ref != ours and lone_surrogate(ref):
                known += 1
            elif ref != ours:
                bad += 1
                show(f"stdout {json.dumps(text)}", ref, ours)
    print(f"json errors: {bad} differences in {count} ({known} known: a lone surrogate)")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main(int(sys.argv[1]), int(sys.argv[2])) else 0)

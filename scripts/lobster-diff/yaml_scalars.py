"""YAML scalar typing in workflow files (YAML 1.2 core schema, as the
`yaml` package reads it): each value becomes an arg default printed back
through LOBSTER_ARGS_JSON by both implementations. Left out: `0b101` and
`0X1F`, which the `yaml` package keeps as strings and serde-saphyr reads as
integers with no option to turn that off."""

import os
import sys
import tempfile

from common import both, show

SCALARS = ["yes", "no", "on", "off", "True", "TRUE", "true", "~", "null", "Null", "", "0o17", "017", "0x1F", "1_000", "1e3",
           "1E3", ".5", "+1", "-0", ".inf", "-.Inf", ".nan", "2024-01-02", "2024-01-02T03:04:05Z", "'quoted'", '"esc\\tape"',
           "12:30", "1,2", "[1, two]", "{a: 1}", "!!str 5", "&anc x", "1.0", "1.", "007", "0.1e-2", "'0x10'", "≥"]


def main():
    bad = 0
    for i in range(0, len(SCALARS), 8):
        chunk = SCALARS[i:i + 8]
        args = "".join(f"  a{j}:\n    default: {v}\n" for j, v in enumerate(chunk))
        wf = f"args:\n{args}steps:\n  - id: s\n    run: printf '%s' \"$LOBSTER_ARGS_JSON\"\n"
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "w.lobster"), "w") as f:
                f.write(wf)
            ref, ours = both(["run", "--mode", "tool", "w.lobster"], d, d)
            if ref != ours:
                bad += 1
                show(" ".join(chunk), ref, ours)
    print(f"yaml scalars: {bad} differences in {len(SCALARS)} scalars")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main() else 0)

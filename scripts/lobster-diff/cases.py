"""Hand-written CLI, resume and workflow cases (help for every command,
resume variants, bad input, for_each, parallel, on_error, sub-workflows…),
replayed by both with the conformance runner's sandbox and normalisation."""

import os
import sys
import tempfile

from common import OURS, REF, corpus, first_step_difference, replay

FILES = {
  "wf.lobster": "name: w\nargs:\n  n:\n    default: 2\nsteps:\n  - id: a\n    run: echo ${n}\n  - id: g\n    approval: ok?\n  - id: b\n    run: echo done $a.stdout\n    when: $g.approved\n",
  "in.lobster": "steps:\n  - id: q\n    input:\n      prompt: name?\n      responseSchema:\n        type: object\n        properties:\n          name: {type: string}\n        required: [name]\n  - id: r\n    run: echo hi $q.response.name\n",
  "items.json": "[{\"a\":1},{\"a\":2}]",
}
WFS = {
 "fe.lobster": "steps:\n  - id: list\n    run: echo '[1,\"two\",{\"x\":3},null]'\n  - id: each\n    for_each: $list.json\n    steps:\n      - id: show\n        run: echo \"item=$item.json idx=$index.json\"\n      - id: skip\n        run: echo never\n        when: false\n",
 "fe2.lobster": "steps:\n  - id: list\n    run: echo '[]'\n  - id: each\n    for_each: $list.json\n    item_var: it\n    index_var: i\n    steps:\n      - id: s\n        pipeline: exec --json echo '[1]'\n",
 "fe3.lobster": "steps:\n  - id: list\n    run: echo '{\"a\":1}'\n  - id: each\n    for_each: $list.json\n    steps:\n      - id: s\n        run: echo x\n",
 "par.lobster": "steps:\n  - id: p\n    parallel:\n      branches:\n        - id: l\n          run: echo '{\"side\":\"left\"}'\n        - id: r\n          run: echo right\n        - id: q\n          pipeline: exec --json echo '[1,2]' | head --n 1\n  - id: after\n    run: echo \"$l.json.side $r.stdout $p.json\"\n",
 "err.lobster": "steps:\n  - id: a\n    run: exit 4\n    on_error: continue\n  - id: b\n    run: echo \"err=$a.error msg=$a.errorMessage\"\n",
 "err2.lobster": "steps:\n  - id: a\n    run: echo ok\n  - id: b\n    run: echo bad >&2; exit 2\n    on_error: skip_rest\n  - id: c\n    run: echo never\n",
 "err3.lobster": "steps:\n  - id: a\n    pipeline: nosuchcommand\n",
 "err4.lobster": "steps:\n  - id: a\n    run: sleep 2\n    timeout_ms: 100\n    on_error: continue\n  - id: b\n    run: echo after $a.errorMessage\n",
 "stdin.lobster": "steps:\n  - id: a\n    run: echo '{\"k\":[1,2]}'\n  - id: b\n    run: cat\n    stdin: $a.json.k\n  - id: c\n    run: cat\n    stdin:\n      x: 1\n  - id: d\n    pipeline: pick k\n    stdin: $a.json\n  - id: e\n    run: cat\n    stdin: \"pre $a.stdout post\"\n",
 "env.lobster": "args:\n  who:\n    default: world\n  obj:\n    default: {a: 1}\nenv:\n  GREETING: hello ${who}\nsteps:\n  - id: a\n    run: echo \"$GREETING $LOBSTER_ARG_WHO $LOBSTER_ARG_OBJ\"\n    env:\n      EXTRA: $nope.stdout\n  - id: b\n    run: echo \"$EXTRA|$LOBSTER_ARGS_JSON\"\n    env:\n      EXTRA: got $a.stdout\n",
 "sub.lobster": "steps:\n  - id: s\n    workflow: child.lobster\n    workflow_args:\n      x: 7\n  - id: t\n    run: echo \"sub=$s.json\"\n",
 "child.lobster": "args:\n  x:\n    default: 1\nsteps:\n  - id: c\n    run: echo '{\"x\":${x}}'\n",
 "cyc.lobster": "steps:\n  - id: s\n    workflow: cyc.lobster\n",
 "pipe.lobster": "steps:\n  - id: a\n    pipeline: exec --json echo '[{\"a\":1},{\"a\":2}]' | where a>=2 | table\n  - id: b\n    pipeline: exec --json echo '[3]' | json\n  - id: c\n    pipeline: exec echo hi there\n",
 "cond.lobster": "steps:\n  - id: a\n    run: echo '{\"n\":3}'\n  - id: b\n    run: echo big\n    when: $a.json.n > 2 && !$a.skipped\n  - id: c\n    run: echo small\n    condition: $a.json.n < 2\n  - id: d\n    run: echo $c.skipped $b.skipped\n",
 "badcond.lobster": "steps:\n  - id: a\n    run: echo 1\n    when: $zz.json == 1\n",
 "badcond2.lobster": "steps:\n  - id: a\n    run: echo 1\n    when: abc == 1\n",
 "badcond3.lobster": "steps:\n  - id: a\n    run: echo 1\n    when: 5\n",
 "retry.lobster": "steps:\n  - id: a\n    run: exit 1\n    retry:\n      max: 2\n      delay_ms: 10\n",
 "plain.lobster": "steps:\n  - id: a\n    run: printf 'no newline'\n",
 "empty.lobster": "steps:\n  - id: a\n    run: 'true'\n",
 "multi.lobster": "steps:\n  - id: a\n    run: echo 1\n  - id: g1\n    approval:\n      prompt: first?\n      items: [1, 2]\n      preview: pv\n  - id: g2\n    approval: true\n    stdin: $a.json\n  - id: z\n    run: echo done\n",
 "apout.lobster": "steps:\n  - id: s\n    run: echo '{\"requiresApproval\":{\"prompt\":\"From output?\",\"items\":[1],\"preview\":\"p\"}}'\n    approval: required\n",
}
FILES.update(WFS)
CMDS = ["approve","ask","clawd.invoke","commands.list","dedupe","diff.last","email.triage","exec","gog.gmail.search","gog.gmail.send","groupBy","head","json","llm.invoke","llm_task.invoke","map","openclaw.agent","openclaw.invoke","pick","sort","state.get","state.set","table","template","where","workflows.list","workflows.run","nosuch"]
CASES = [[["help", c]] for c in CMDS] + [[[c, "--help"]] for c in CMDS[:5]] + [
  [["run", "--mode", "tool", "wf.lobster"]],
  [["run", "wf.lobster", "--mode", "tool", "--args-json", "{\"n\":5}"]],
  [["run", "--mode", "tool", "wf.lobster", "--args-json", "[1,2]"]],
  [["run", "--mode", "tool", "wf.lobster", "--args-json", "nope"]],
  [["run", "--mode", "tool", "--dry-run", "wf.lobster"]],
  [["run", "--mode", "tool", "wf.lobster"], ["resume", "--token", "{{token:0}}", "--approve", "yes"]],
  [["run", "--mode", "tool", "wf.lobster"], ["resume", "--token", "{{token:0}}", "--approve", "no"]],
  [["run", "--mode", "tool", "wf.lobster"], ["resume", "--token", "{{token:0}}", "--approve", "maybe"]],
  [["run", "--mode", "tool", "wf.lobster"], ["resume", "--token", "{{token:0}}"]],
  [["run", "--mode", "tool", "wf.lobster"], ["resume", "--token", "{{token:0}}", "--cancel"]],
  [["run", "--mode", "tool", "wf.lobster"], ["resume", "--id", "{{approvalId:0}}", "--approve", "yes"]],
  [["run", "--mode", "tool", "wf.lobster"], ["resume", "--token", "{{token:0}}", "--approve", "yes"], ["resume", "--token", "{{token:0}}", "--approve", "yes"]],
  [["run", "--mode", "tool", "in.lobster"], ["resume", "--token", "{{token:0}}", "--response-json", "{\"name\":\"bob\"}"]],
  [["run", "--mode", "tool", "in.lobster"], ["resume", "--token", "{{token:0}}", "--response-json", "{\"name\":1}"]],
  [["run", "--mode", "tool", "in.lobster"], ["resume", "--token", "{{token:0}}", "--response-json", "nope"]],
  [["run", "--mode", "tool", "in.lobster"], ["resume", "--token", "{{token:0}}", "--approve", "yes"]],
  [["resume", "--token", "garbage", "--approve", "yes"]],
  [["resume", "--approve", "yes"]],
  [["resume"]],
  [["run", "--mode", "tool", "exec --json cat items.json | approve --prompt 'go?' | pick a"], ["resume", "--token", "{{token:0}}", "--approve", "yes"]],
  [["run", "--mode", "tool", "exec --json cat items.json | approve --prompt 'go?' | pick a"], ["resume", "--token", "{{token:0}}", "--approve", "no"]],
  [["exec --json cat items.json | approve --prompt 'go?' | pick a"]],
  [["run", "--mode", "tool", "exec --json cat items.json | state.set k"], ["run", "--mode", "tool", "state.get k"], ["state.get k"], ["state.get nope"]],
  [["run", "--mode", "tool", "exec --json cat items.json | diff.last --key d"], ["run", "--mode", "tool", "exec --json cat items.json | diff.last --key d"]],
  [["run", "--mode", "tool", "commands.list | head --n 3"]],
  [["run", "--mode", "tool", "workflows.list"]],
  [["run", "--mode", "tool", "exec --stdin json --json cat | json"]],
  [["run", "--mode", "tool", "exec --json cat items.json | exec --stdin jsonl cat"]],
  [["run", "--mode", "tool", "exec --json cat items.json | exec --stdin raw cat"]],
  [["run", "--mode", "tool", "exec --json cat items.json | exec --stdin bogus cat"]],
  [["run", "--mode", "tool", "exec sh -c 'echo err >&2; exit 3'"]],
  [["exec sh -c 'echo err >&2; exit 3'"]],
  [["run", "--mode", "tool", "exec nosuchprogram"]],
  [["run", "--mode", "tool", "exec --shell 'printf \"a\\nb\\n\\nc\"'"]],
  [["run", "--mode", "tool", ""]],
  [["run", "--mode", "tool", "| json"]],
  [["run", "--mode", "tool", "json |"]],
  [["run", "--mode", "tool", "exec 'unterminated"]],
  [["run", "--mode", "bogus", "exec echo hi"]],
  [["run", "exec echo hi", "--mode"]],
  [["bogus-subcommand"]], [[]], [["--help"]], [["graph"]], [["graph", "wf.lobster", "--format", "svg"]],
  [["run", "--mode", "tool", "exec --json echo '[1,2,3]' | head --n 2 | table"]],
  [["run", "--mode", "tool", "exec --json echo '{\"a\":{\"b\":[1,2]}}' | template --text 'x={{a.b}} y={{a}} z={{a.b.0}} w={{nope}}'"]],
  [["run", "--mode", "tool", "exec --json echo '[{\"a\":\"Hi\"}]' | template --text '{{a | upper}} {{a | lower}} {{a | json}} {{a | bogus}}'"]],
  [["run", "--mode", "tool", "exec --json echo '[{\"a\":1,\"b\":{\"c\":2}}]' | map --unwrap b | map x={{c}} y=lit"]],
]

for name in WFS:
    if name != "child.lobster":
        CASES.append([["run", "--mode", "tool", name]])
        CASES.append([["run", name]])
CASES.append([["run", "--mode", "tool", "multi.lobster"], ["resume", "--token", "{{token:0}}", "--approve", "yes"], ["resume", "--token", "{{token:1}}", "--approve", "yes"]])
CASES.append([["run", "--mode", "tool", "apout.lobster"], ["resume", "--token", "{{token:0}}", "--approve", "yes"]])
# Input requests: defaults, schema refusals, subjects.
FILES["in2.lobster"] = ("steps:\n  - id: a\n    run: echo '{\"draft\":\"hi\"}'\n  - id: q\n    input:\n      prompt: Edit?\n"
                        "      defaults: {text: hi}\n      responseSchema:\n        type: object\n        properties:\n"
                        "          text: {type: string, minLength: 2}\n          n: {type: integer}\n        required: [text]\n"
                        "  - id: out\n    run: echo \"$q.response.text $q.subject.draft $q.response.n\"\n")
for response in ('{"text":"ok"}', '{"text":"x"}', '{"text":"fine","n":2}', '{"text":"fine","n":2.5}', '[]', '"str"', 'null'):
    CASES.append([["run", "--mode", "tool", "in2.lobster"], ["resume", "--token", "{{token:0}}", "--response-json", response]])
CASES.append([["run", "--mode", "tool", "exec --json echo '[{\"a\":1}]' | ask --prompt 'why?' | json"], ["resume", "--token", "{{token:0}}", "--response-json", '"because"']])
CASES.append([["run", "--mode", "tool", "exec --json echo '[{\"a\":1}]' | ask --prompt 'why?' --schema '{\"type\":\"number\"}'"], ["resume", "--token", "{{token:0}}", "--response-json", '"nope"']])
for args_json in ('{"n":"7"}', '{"n":null}', '{"n":[1,2]}', '{"n":{"x":1}}', '{"m":1}', '"s"', '3', '{}'):
    CASES.append([["run", "--mode", "tool", "wf.lobster", "--args-json", args_json]])
# Input gates with large subjects (envelope size limits), pipeline dry runs,
# diff.last sequences, --id resumes of pipelines, --file.
FILES["big.lobster"] = ("steps:\n  - id: a\n    run: |\n      python3 -c \"import json; print(json.dumps([{'i': i, 'pad': 'x' * 90} for i in range(N)]))\"\n"
                        "  - id: q\n    input:\n      prompt: ok?\n      responseSchema: {type: object}\n")
for n, limit in (("100", None), ("2500", None), ("2500", "5000"), ("2500", "1500"), ("20", "1100")):
    text = FILES["big.lobster"].replace("range(N)", f"range({n})")
    FILES[f"big{n}.lobster"] = text
    CASES.append([{"args": ["run", "--mode", "tool", f"big{n}.lobster"], "env": {"LOBSTER_MAX_TOOL_ENVELOPE_BYTES": limit} if limit else {}}])
CASES.append([["run", "--mode", "tool", "--dry-run", "exec --json cat items.json | where a>1 | nosuch"]])
CASES.append([["run", "--dry-run", "exec --json cat items.json | approve --prompt x | json"]])
CASES.append([["run", "--mode", "tool", "exec --json cat items.json | diff.last --key k"],
              ["run", "--mode", "tool", "exec --json echo '[{\"a\":2},{\"a\":3}]' | diff.last --key k"],
              ["run", "--mode", "tool", "exec --json echo '[]' | diff.last --key k"], ["run", "--mode", "tool", "diff.last"]])
CASES.append([["run", "--mode", "tool", "exec --json cat items.json | approve --prompt go"], ["resume", "--id", "{{approvalId:0}}", "--approve", "yes"],
              ["resume", "--id", "{{approvalId:0}}", "--approve", "yes"], ["resume", "--id", "deadbeef", "--approve", "yes"], ["resume", "--id", "nothex!", "--approve", "yes"]])
CASES.append([["run", "--mode", "tool", "--file", "wf.lobster"]])
CASES.append([["run", "--file", "nope.lobster"]])
CASES.append([["run", "--mode", "tool", "--file", "items.json"]])
CASES.append([["run", "--mode", "tool", "state.set 'odd key/with..slashes'"], ["run", "--mode", "tool", "exec --json echo [5] | state.set '../escape'"], ["run", "--mode", "tool", "state.get '../escape'"]])
# Approver identity: initiator, required approver, different approver.
ID = "id.lobster"
FILES[ID] = ("steps:\n  - id: g\n    approval:\n      prompt: ship?\n      required_approver: alice\n"
             "      require_different_approver: true\n  - id: done\n    run: echo \"by=$g.approvedBy init=$g.initiatedBy\"\n")
FILES["id2.lobster"] = "steps:\n  - id: g\n    approval: go?\n  - id: done\n    run: echo \"by=$g.approvedBy init=$g.initiatedBy\"\n"
for env in ({}, {"LOBSTER_APPROVAL_APPROVED_BY": "bob"}, {"LOBSTER_APPROVAL_APPROVED_BY": "alice"}, {"LOBSTER_APPROVAL_APPROVED_BY": " alice "}):
    for wf in (ID, "id2.lobster"):
        CASES.append([{"args": ["run", "--mode", "tool", wf], "env": {"LOBSTER_APPROVAL_INITIATED_BY": "alice"}},
                      {"args": ["resume", "--token", "{{token:0}}", "--approve", "yes"], "env": env},
                      {"args": ["resume", "--token", "{{token:0}}", "--approve", "yes"], "env": {"LOBSTER_APPROVAL_APPROVED_BY": "carol"}}])
CASES.append([{"args": ["run", "--mode", "tool", "id2.lobster"], "env": {"LOBSTER_APPROVAL_REQUIRED_APPROVER": "dave", "LOBSTER_APPROVAL_REQUIRE_DIFFERENT_APPROVER": "1"}},
              {"args": ["resume", "--token", "{{token:0}}", "--approve", "yes"], "env": {"LOBSTER_APPROVAL_APPROVED_BY": "dave"}}])
CASES.append([{"args": ["run", "--mode", "tool", "exec --json echo [1] | approve --prompt ok"], "env": {"LOBSTER_APPROVAL_INITIATED_BY": "x", "LOBSTER_APPROVAL_REQUIRE_DIFFERENT_APPROVER": "true"}},
              {"args": ["resume", "--token", "{{token:0}}", "--approve", "yes"], "env": {"LOBSTER_APPROVAL_APPROVED_BY": "x"}},
              {"args": ["resume", "--token", "{{token:0}}", "--approve", "yes"], "env": {"LOBSTER_APPROVAL_APPROVED_BY": "y"}}])

# Issue #20: exec and resume error paths found by running the real Lobster.
# A command that fails silently is named by what ran (the shell line, or
# the program); a non-empty --id wins over --token.
FILES["silent.lobster"] = "steps:\n  - id: a\n    run: exit 3\n"
FILES["noisy.lobster"] = "steps:\n  - id: a\n    run: echo out; exit 4\n"
FILES["notexec.sh"] = "#!/bin/sh\necho never\n"
FILES["noshebang.sh"] = "echo no shebang\n"
EXECUTABLE = {"noshebang.sh"}
for line in ("exec --shell 'exit 3'", "exec --json --shell 'exit 5'", "exec false", "exec sh -c 'exit 4'", "exec --shell ''",
             "exec", "exec --shell 'kill -9 $$'", "exec --shell 'kill -15 $$'", "exec ./notexec.sh", "exec /tmp", "exec ./noshebang.sh", "exec --shell= echo hi", "exec --shell ' '",
             "exec --json --shell 'echo nope'", "exec --shell 'nosuchcommand'", "exec --json --shell 'printf \"\"'"):
    CASES.append([["run", "--mode", "tool", line]])
    CASES.append([[line]])
for wf in ("silent.lobster", "noisy.lobster"):
    CASES.append([["run", "--mode", "tool", wf]])
PAUSE = "exec --json cat items.json | approve --prompt go"
ASK = "exec --json cat items.json | ask --prompt why"
for first in (["--approve", "yes"], ["--approve", "no"], ["--cancel"]):
    for again in (["--id", "{{approvalId:0}}", "--approve", "yes"], ["--token", "{{token:0}}", "--approve", "no"],
                  ["--id", "{{approvalId:0}}", "--response-json", '"x"']):
        for flow in (PAUSE, "wf.lobster"):
            CASES.append([["run", "--mode", "tool", flow], ["resume", "--token", "{{token:0}}"] + first, ["resume"] + again])
for resume in (["--id", "{{approvalId:0}}", "--token", "garbage", "--approve", "yes"], ["--id", "abc", "--token", "{{token:0}}", "--approve", "yes"],
               ["--id", "", "--token", "garbage", "--approve", "yes"], ["--id", "", "--approve", "yes"], ["--token", "", "--approve", "yes"],
               ["--token", "{{token:0}}", "--approve", "yes", "--response-json", '"x"'], ["--token", "{{token:0}}", "--approve", "yes", "--cancel"]):
    for flow in (PAUSE, ASK):
        CASES.append([["run", "--mode", "tool", flow], ["resume"] + resume])
CASES.append([["run", "--mode", "tool", ASK], ["resume", "--id", "{{approvalId:0}}", "--response-json", '"x"'], ["resume", "--id", "{{approvalId:0}}", "--response-json", '"y"']])

# Issue #33: every kind of paused run (a pipeline's approval as its last
# stage, with a stage after it, pausing again, failing after it; a
# pipeline's input; workflow approval, input and two-gate files), decided
# by token or by id, then resumed again by token or by id. Input gates
# have no approval id: their --id is one that was never issued.
FLOWS = {PAUSE: "approval", PAUSE + " | pick a": "approval", PAUSE + " | approve --prompt again": "approval",
         PAUSE + " | exec --shell 'exit 3'": "approval", ASK: "input", ASK + " | pick a": "input",
         "wf.lobster": "approval", "multi.lobster": "approval", "in.lobster": "input"}
DECISIONS = {"approval": (["--approve", "yes"], ["--approve", "no"], ["--cancel"]),
             "input": (["--response-json", '{"name":"bob"}'], ["--cancel"])}
for flow, gate in FLOWS.items():
    by = (["--token", "{{token:0}}"], ["--id", "{{approvalId:0}}" if gate == "approval" else "0badc0de"])
    for first_by in by:
        for first in DECISIONS[gate]:
            for again_by in by:
                CASES.append([["run", "--mode", "tool", flow], ["resume"] + first_by + first,
                              ["resume"] + again_by + DECISIONS[gate][0]])


def replay_in(steps, binv, d):
    sb = corpus.Sandbox(d)
    os.makedirs(sb.work)
    os.makedirs(sb.home)
    for name, text in FILES.items():
        with open(os.path.join(sb.work, name), "w") as f:
            f.write(text)
        if name in EXECUTABLE:
            os.chmod(os.path.join(sb.work, name), 0o755)
    return replay(binv, [s if isinstance(s, dict) else {"args": s} for s in steps], {}, sb)


def main():
    bad = 0
    for steps in CASES:
        with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
            bad += first_step_difference(steps, replay_in(steps, REF, d1), replay_in(steps, OURS, d2))
    print(f"cases: {bad} of {len(CASES)} differ")
    return bad


if __name__ == "__main__":
    sys.exit(1 if main() else 0)

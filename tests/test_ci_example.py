"""The example CI workflow (examples/ci/tfmatrix.yml) is valid GitHub Actions YAML that runs what the README says."""
from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from tfmatrix import cli

WORKFLOW = Path(__file__).resolve().parent.parent / "examples" / "ci" / "tfmatrix.yml"


def test_the_workflow_is_a_github_actions_workflow_for_a_self_hosted_runner() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text())
    on = doc.get("on", doc.get(True))            # YAML 1.1 reads a bare `on` key as True
    assert set(doc) >= {"name", "jobs"} and "push" in on and "pull_request" in on
    assert set(doc["jobs"]) == {"pull-request", "benchmark"}
    for job in doc["jobs"].values():
        assert "self-hosted" in job["runs-on"] and isinstance(job["timeout-minutes"], int)
        steps = job["steps"]
        assert all(("run" in s) != ("uses" in s) for s in steps)          # each step runs or uses, not both
        assert all(set(s) <= {"name", "run", "uses", "with", "if", "env", "id"} for s in steps)
    assert "pull_request" in doc["jobs"]["pull-request"]["if"] and "pull_request" in doc["jobs"]["benchmark"]["if"]
    assert doc["concurrency"]["cancel-in-progress"] is False


def test_the_workflows_tfmatrix_commands_parse_with_this_tfmatrix() -> None:
    """Every ``python3 -m tfmatrix ...`` line of the workflow is accepted by the real parser, and the gate uses
    --fail-on."""
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    steps = jobs["benchmark"]["steps"] + jobs["pull-request"]["steps"]
    commands = []
    for step in steps:
        for line in " ".join(str(step.get("run", "")).split("\n")).split("python3 -m tfmatrix ")[1:]:
            line = line.replace('"$@"', "--kept earlier/1")          # the kept runs the shell loop gathered
            commands.append(shlex.split(line.split(" --csv")[0].split(";")[0].replace('"', "")))
    assert [c[0] for c in commands] == ["matrix", "compare", "ab"]
    assert "--fail-on" in commands[1] and "--fail-on" in commands[2]
    assert commands[1][commands[1].index("--normalise") + 1] == "control"     # a whole file getting slower is seen
    assert "--kept" in commands[1]                  # each variant's run-to-run wander in the pushes kept before
    for argv in commands:
        args = cli.build_parser().parse_args(argv)      # an unknown option or a bad value raises UserError
        assert args.run is not None

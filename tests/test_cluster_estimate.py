"""How long a run on a cluster may take: cells side by side on the slots the live nodes offer."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from rich.console import Console

from tfmatrix.progress.board import ClusterProgress, makespan
from tfmatrix.runners.placement import Needs, capacity


def _node(cpu: float, gpu: float = 0, alive: bool = True) -> dict:
    return {"Alive": alive, "Resources": {"CPU": cpu, **({"GPU": gpu} if gpu else {})}}


def test_makespan_is_bounded_by_the_slowest_cell_and_the_total_over_the_slots():
    times = [268, 200, 150, 120, 100, 90, 84, 60, 57, 30]
    assert makespan(times, 1) == sum(times)
    assert makespan(times, 4) >= max(max(times), sum(times) / 4)
    assert makespan(times, 4) < sum(times) / 4 + max(times)
    assert makespan(times, 100) == 268
    assert makespan([], 3) == 0.0


def test_capacity_counts_whole_cells_per_node_and_gpus_for_gpu_cells():
    cpu, gpu = Needs(2), Needs(1, 1)
    nodes = [_node(0), _node(2), _node(4), _node(3, 2), _node(8, 0, alive=False)]
    assert capacity([cpu] * 10, nodes) == 1 + 2 + 1
    assert capacity([cpu] * 2, nodes) == 2                 # never more than there are cells
    assert capacity([gpu] * 5, nodes) == 2
    assert capacity([cpu] * 10 + [gpu] * 5, nodes) == 4 + 2
    assert capacity([cpu], [_node(1)]) == 1                 # no node fits: still one (the cell is skipped anyway)


def test_the_tally_counts_down_on_the_clusters_width_not_serially():
    board = ClusterProgress(3, Console(stderr=True, width=300, highlight=False), 300.0,
                            {"a": 100.0, "b": 100.0, "c": 100.0}, width=2)
    assert board.eta(time.monotonic()) == 200.0             # two waves, not 300 s
    a = board.view("a")
    a.start_cell("a", 1)
    a.placed("n1/1")
    board.running["a"].started -= 40                        # a has run 40 s of its 100
    assert abs(board.eta(time.monotonic()) - 160.0) < 1.0   # b and c side by side, then a's last 60 s after one
    a.finish_cell("ok", None, 100.0)
    assert board.eta(time.monotonic()) == 100.0             # b and c side by side
    assert board.tally().endswith("~1:40 left")


def test_rounds_count_every_cell_once_per_round_and_never_below_zero():
    board = ClusterProgress(2, Console(stderr=True, width=300, highlight=False), 400.0,
                            {"a": 100.0, "b": 100.0}, width=2, rounds=2)
    assert board.eta(time.monotonic()) == 200.0             # this round's wave, then the next round's
    for name in ("a", "b"):
        view = board.view(name)
        view.start_cell(name, 1)
        view.finish_cell("ok", None, 100.0)
    assert " 2 done; 2 left" in board.tally()               # the second round is still to run
    board.next_round()
    assert board.eta(time.monotonic()) == 100.0
    for name in ("a", "b"):
        view = board.view(name)
        view.start_cell(name, 1)
        view.finish_cell("ok", None, 100.0)
    assert board.tally().endswith("4 done; 0 left")


def test_the_opening_estimate_counts_the_preparation_only_where_the_runner_has_not_built_the_cell(tmp_path):
    """A first run into a new reports directory on a host whose images exist once said 54 minutes for 40."""
    from tfmatrix.execution import estimates as dispatch
    from tfmatrix.execution.request import RunRequest
    from tfmatrix.matrix import load

    cell = load().cell("tf2.15-cpu")
    request = RunRequest(preset="seed", rounds=3)
    last = dispatch.last_runs(tmp_path, [cell.name])
    cold = dispatch.cell_estimates([request.job(cell)], request, last, lambda c: False)[cell.name]
    warm = dispatch.cell_estimates([request.job(cell)], request, last, lambda c: True)[cell.name]
    assert warm == dispatch.ESTIMATE_RUN_S["seed"] * 3 and cold == warm + dispatch.ESTIMATE_SETUP_S


def _sequential_doc(reports: Path, name: str, only: tuple[str, ...], first_look: int, run_s: float,
                    reference_s: float) -> None:
    from report_docs import results_doc

    from tfmatrix.results.documents import CellRequest, SuiteResults
    from tfmatrix.results.store import CellOutcome, cell_document, cell_paths, write_cell

    doc = results_doc([], tf="2.15.1", cell=name)
    doc["config"].update(rounds=2, host_speed=[[1, 0.0, reference_s], [2, 1.0, reference_s]],
                         schedule={"kind": "interleaved", "run": "r", "seed": 1,
                                   "sequential": {"first_look": first_look, "lines": []}})
    results = SuiteResults.from_json(doc, Path(f"{name}.json"))
    asked = CellRequest(preset="seed", only=only, rounds=4, schedule="interleaved", sequential=True)
    write_cell(cell_paths(reports, name)[0], cell_document({"name": name, "tf": "2.15", "target": "cpu"},
               CellOutcome(name, "ok", None, {"name": "docker"}, {"run_s": run_s}, results), asked))


def test_the_defaults_estimate_is_scaled_by_the_host_reference_and_by_what_the_last_run_was(tmp_path):
    """The default (the claims' variants, sequential): never run here, its measured constants at the host's speed
    now; run before with the same selection, that run's time at the speed now against then, less the round a first
    run waited for its first look when a noise history now lets round 1 look."""
    from tfmatrix.execution import estimates
    from tfmatrix.execution.request import RunRequest
    from tfmatrix.matrix import load

    cell = load().cell("tf2.15-cpu")
    only = ("a[x=1]", "b[x=1]")
    request = RunRequest(preset="seed", only=only, rounds=4, sequential=True, claims_only=True)
    jobs = [request.job(cell)]
    ref = estimates.ESTIMATE_REFERENCE_S

    def here() -> dict:
        return estimates.last_runs(tmp_path, [cell.name])
    fresh = estimates.cell_estimates(jobs, request, here(), lambda c: True, ref / 2, warm=False)[cell.name]
    assert fresh == estimates.CLAIMS_RUN_S["cold"] / 2
    _sequential_doc(tmp_path, cell.name, only, first_look=1, run_s=600.0, reference_s=0.010)
    again = estimates.cell_estimates(jobs, request, here(), lambda c: True, 0.020, warm=True)[cell.name]
    assert again == pytest.approx(1200.0)                       # the host twice as slow now
    _sequential_doc(tmp_path, cell.name, only, first_look=2, run_s=600.0, reference_s=0.010)
    after_first = estimates.cell_estimates(jobs, request, here(), lambda c: True, 0.010, warm=True)[cell.name]
    assert after_first == pytest.approx(600.0 * estimates.CLAIMS_RUN_S["warm"] / estimates.CLAIMS_RUN_S["cold"])
    _sequential_doc(tmp_path, cell.name, ("other[x=1]",), first_look=1, run_s=5.0, reference_s=0.010)
    other = estimates.cell_estimates(jobs, request, here(), lambda c: True, ref, warm=True)[cell.name]
    assert other == estimates.CLAIMS_RUN_S["warm"]                # another selection's time says nothing

"""The commands that prepare and show, and measure nothing: ``validate``, ``list``, ``render``, ``wheels``,
``base-images``.

Each reads ``--matrix`` and (but ``validate``) selects cells with ``--only``;
``wheels`` and ``base-images`` fill the caches a run would otherwise fill on
demand, for hosts without PyPI or a registry.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .. import paths
from ..errors import UserError
from ..matrix import Cell
from .common import load_matrix, output_dir, selected
from .options import add_only

# --------------------------------------------------------------------------- validate


def cmd_validate(args: argparse.Namespace) -> int:
    """Load and check the matrix; one summary line."""
    from ..execution.estimates import cold_estimate
    from ..progress import fmt_duration
    from .claims import claims_of
    from .settings import claims_focus

    matrix = load_matrix(args)
    s = matrix.settings
    claims = claims_of(matrix, s.claims)
    focus = claims_focus(s.variants, (), s.bench_paths, s.preset, claims)
    n, w = len(matrix.cells), len(matrix.warnings)
    default = matrix.select([])                 # what `matrix` runs: every cell but the opt-in ones
    opt = f", {n - len(default)} of them opt-in" if len(default) < n else ""
    own = sum(1 for c in claims if c.family not in s.claims)
    print(f"{n} cell{'s' * (n != 1)} OK{opt} ({w} warning{'s' * (w != 1)}), {len(claims)} claims ("
          f"{', '.join(s.claims)}{f' and {own} of your own' if own else ''}); a first `matrix` run of "
          f"{'all of them' if not opt else 'the others'}: "
          f"roughly {fmt_duration(cold_estimate(default, s.rounds, s.sequential, only=focus))}")
    return 0


# --------------------------------------------------------------------------- list


def _list_rows(cells: Sequence[Cell]) -> list[dict[str, object]]:
    from ..provision.render import render_cells  # jinja2 only when needed

    built = [c for c in cells if not c.existing]        # an existing environment has no image
    tags = {c.name: r.tag for c, r in zip(built, render_cells(built), strict=True)}
    return [{**c.to_dict(), "tag": tags.get(c.name, "existing:" + (c.interpreter or ""))} for c in cells]


def cmd_list(args: argparse.Namespace) -> int:
    """Print the resolved cells as a table (or JSON with --json)."""
    matrix = load_matrix(args)
    cells = selected(matrix, args.only) if args.only else matrix.cells      # the opt-in cells too, marked
    rows = _list_rows(cells)
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from rich.table import Table

    from ..progress import table_console

    table = Table(title=f"{matrix.path.name}: {len(cells)} cells (baseline {matrix.settings.baseline}; an opt-in "
                        "cell runs only when named)")
    for column in ("name", "TF", "Keras", "Python", "target", "CUDA/cuDNN", "base image", "tag"):
        table.add_column(column, no_wrap=column in ("name", "tag"))
    for cell, row in zip(cells, rows, strict=True):
        cuda = f"{cell.cuda}/{cell.cudnn}" if cell.cuda else "-"
        if cell.existing:
            table.add_row(cell.name, "as installed", "as installed", cell.interpreter, cell.target, "as installed",
                          "(an existing environment)", "-")
            continue
        name = cell.name + (" (opt-in)" if cell.opt_in else "")
        table.add_row(name, cell.tf or "- (no TF)", cell.keras.label, cell.python, cell.target, cuda,
                      cell.base.ref, str(row["tag"]).rsplit(":", 1)[1])
    table_console().print(table)
    return 0


def configure_list(p: argparse.ArgumentParser) -> None:
    add_only(p)
    p.add_argument("--json", action="store_true", help="print cell.json documents (with tags) as a JSON array")


# --------------------------------------------------------------------------- render


def cmd_render(args: argparse.Namespace) -> int:
    """Write build/images/<cell>/{Dockerfile,requirements.txt,cell.json}."""
    from ..provision.render import render_cells, write_rendered

    matrix = load_matrix(args)
    cells = selected(matrix, args.only)
    out = output_dir(args.out, "--out")
    for cell in cells:
        if cell.existing:
            print(f"{cell.name}: an existing environment ({cell.interpreter}): nothing to render")
    built = [c for c in cells if not c.existing]
    for rendered in render_cells(built):
        target = write_rendered(rendered, out)
        print(f"{target}  {rendered.tag}")
    print(f"rendered {len(built)} cell{'s' if len(built) != 1 else ''} into {out}")
    return 0


def configure_render(p: argparse.ArgumentParser) -> None:
    add_only(p)
    p.add_argument("--out", default=str(paths.RENDER_DIR), metavar="DIR",
                   help="output directory (default: build/images)")


# --------------------------------------------------------------------------- wheels


def cmd_wheels(args: argparse.Namespace) -> int:
    """Fill the shared wheelhouse for the selected cells (air-gapped hosts: run this where PyPI answers)."""
    from ..provision import render, wheelhouse

    matrix = load_matrix(args)
    cells = selected(matrix, args.only)
    failed = 0
    for cell in (c for c in cells if not c.existing):     # an existing environment installs nothing
        try:
            ws = wheelhouse.ensure(render.build_requirements(cell), cell.python, offline=args.offline,
                                   log=(print if args.verbose else (lambda line: None)), verify=True)
        except wheelhouse.WheelhouseError as e:
            print(f"{cell.name}: FAILED: {e}", file=sys.stderr)
            failed += 1
            continue
        damaged = f"; damaged and fetched again: {', '.join(ws.refetched)}" if ws.refetched else ""
        print(f"{cell.name}: {len(ws.files)} wheels ({ws.downloaded} downloaded, {ws.how}, "
              f"{ws.seconds:.1f} s{damaged})")
    print(f"wheelhouse: {wheelhouse.wheelhouse_dir()}")
    return 1 if failed else 0


def configure_wheels(p: argparse.ArgumentParser) -> None:
    add_only(p)
    p.add_argument("--offline", action="store_true", help="use only what the wheelhouse has (TFMATRIX_OFFLINE=1)")
    p.add_argument("--verbose", action="store_true", help="show pip's output")


# --------------------------------------------------------------------------- base-images


def cmd_base_images(args: argparse.Namespace) -> int:
    """Build the base images the selected CPU cells expect, from this host (no registry needed)."""
    from ..provision import base_images
    from ..runners.engine import engine

    matrix = load_matrix(args)
    cells = [c for c in selected(matrix, args.only) if c.target == "cpu"]
    client = engine()
    if client is None:
        raise UserError("base-images: no Docker engine answers (start dockerd, or check DOCKER_HOST)")
    upstream = sorted({c.base.upstream for c in cells if base_images.buildable_python(c.base.upstream)})
    from ..execution.lock import checkout_lock

    try:
        with checkout_lock():   # never build an image twice at once
            built = base_images.ensure_for(client, upstream, log=(print if args.verbose else (lambda line: None)))
    except base_images.BaseImageError as e:
        raise UserError(f"base-images: {e}") from None
    for up, local in built.items():
        print(f"{up} -> {local}")
    print(f"use them with TFMATRIX_BASE_REGISTRY={base_images.LOCAL_REGISTRY} (the docker runner also picks them "
          "by itself when a pull fails)")
    return 0


def configure_base_images(p: argparse.ArgumentParser) -> None:
    add_only(p)
    p.add_argument("--verbose", action="store_true", help="show debootstrap and docker build output")

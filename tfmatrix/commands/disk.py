"""The ``disk`` command: tfmatrix's images, virtualenvs and wheels, who uses each, and (``--prune``) removing the rest.

``python -m tfmatrix disk`` lists; ``disk --prune`` removes what neither the
matrix nor any kept cell file uses and says how much it freed (measured:
the engine's layer bytes and the files' blocks, before and after), never an
image another program made (``provision.hygiene`` finds tfmatrix's own by
label). ``--reports DIR`` (repeatable) names the reports directories whose
cell files count as users (default: reports); ``--only GLOB`` narrows the
list (and the pruning) to what matches.
"""
from __future__ import annotations

import argparse
import fnmatch
from pathlib import Path

from .. import paths
from .common import load_matrix
from .options import add_reports


def cmd_disk(args: argparse.Namespace) -> int:
    from ..provision import hygiene, render
    from ..provision.base_images import DEBIAN_REF
    from ..provision.wheelhouse import requirements_key, wheelhouse_dir
    from ..runners.local import LOCAL, local_runners

    matrix = load_matrix(args)
    runners = local_runners(matrix.settings.base_registry)      # every runner here, asked what it keeps
    wheel_root = wheelhouse_dir()
    manifests = hygiene.wheel_manifests(wheel_root)
    uses = hygiene.Uses()
    for cell in (c for c in matrix.cells if not c.existing):       # an existing environment is not ours
        who = f"{matrix.path.name}: {cell.name}"
        for runner in runners:
            for key in runner.used_by(cell):
                uses.add(key, who)
        # the wheel sets it is built from: an image's (its installer's wheel too) and a virtualenv's
        for reqs in {render.build_requirements(cell), cell.requirements}:
            for name in manifests.get(requirements_key(list(reqs), cell.python), []):
                uses.add(name, who)
    for reports in args.reports or [str(paths.REPORTS_DIR)]:
        for path, who in hygiene.kept_cell_files(Path(reports)):
            doc = hygiene.read_doc(path)
            if doc is not None:
                hygiene.add_cell_doc(uses, doc, f"{who}: {path.stem}", manifests)
    if any(k.startswith(DEBIAN_REF.rsplit("/", 1)[0] + "/python:") for k in uses.by_key):
        uses.add(DEBIAN_REF, "the local python bases (built from it)")
    owners = {item.ref: runner for runner in runners for item in runner.kept()}
    entries = hygiene.plan([*(item for r in runners for item in r.kept()), *hygiene.wheel_stored(wheel_root)], uses)
    if args.only:
        entries = [e for e in entries if any(fnmatch.fnmatchcase(k, g) for g in args.only
                                             for k in (e.item.name,) + e.item.keys)]
    for line in hygiene.table(entries):
        print(line)
    held, unused = hygiene.totals(entries)
    absent = [row.missing.split(" (")[0] for name, row in LOCAL.items() if row.missing
              and name not in {r.name for r in runners}]
    print(f"tfmatrix holds {hygiene.gb(held)} here; {hygiene.gb(unused)} of it nothing uses"
          + "".join(f" ({why}: its environments not listed)" for why in absent))
    if not args.prune:
        if unused:
            print("remove it with: python -m tfmatrix disk --prune   (or nox -s prune)")
        return 0
    before = sum(r.held() for r in runners) + _wheels(entries)
    gone, kept = hygiene.remove(entries, lambda item: owners[item.ref].remove(item), wheel_root)
    after = sum(r.held() for r in runners) + _wheels(entries)
    for line in kept:
        print(line)
    said = sum(e.item.size for e in gone)
    print(f"pruned {len(gone)} of {sum(1 for e in entries if e.prunable)}: freed {hygiene.gb(before - after)} "
          f"(listed as {hygiene.gb(said)}: an image's own layers; layers only pruned images shared go too)")
    return 1 if kept else 0


def _wheels(entries: list) -> int:
    """The wheel files' bytes on disk now (a removed one: 0)."""
    from ..provision import hygiene

    return sum(Path(e.item.ref).stat().st_blocks * 512 if Path(e.item.ref).exists() else 0
               for e in entries if e.item.kind == hygiene.WHEEL)


def configure_disk(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prune", action="store_true",
                   help="remove the images, virtualenvs and wheels nothing listed uses (never another program's)")
    p.add_argument("--only", action="append", metavar="GLOB",
                   help="only what matches GLOB (an image's tag, a virtualenv's or a wheel's name); repeatable")
    add_reports(p, "the kept cell files (cells/, releases/cells/) say what is in use", repeatable=True)

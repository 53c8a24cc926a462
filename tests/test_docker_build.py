"""The wheels a cell's image build reads (``runners.engine.serve_wheels``): served to the build, never copied in."""
from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tfmatrix.runners.engine import WHEELS_PORTS, serve_wheels


def test_a_build_is_served_exactly_its_wheels_on_loopback_and_the_server_goes_with_it(tmp_path: Path) -> None:
    house = tmp_path / "wheelhouse"
    house.mkdir()
    wanted = [house / "six-1.16.0-py2.py3-none-any.whl", house / "uv-0.13.9-py3-none-manylinux_2_17_x86_64.whl"]
    for i, f in enumerate(wanted):
        f.write_bytes(b"wheel %d" % i)
    (house / "other-1.0-py3-none-any.whl").write_bytes(b"not this build's")
    with serve_wheels(wanted, "tfmatrix/tf2.15-cpu:abc") as url:
        host, port = url.removeprefix("http://").split(":")
        assert host == "127.0.0.1" and WHEELS_PORTS[0] <= int(port) < WHEELS_PORTS[1]
        listing = urllib.request.urlopen(url + "/").read().decode()
        assert "six-1.16.0-py2.py3-none-any.whl" in listing and "other-1.0" not in listing   # what --find-links reads
        assert urllib.request.urlopen(f"{url}/tools/uv.whl").read() == b"wheel 1"   # the name the Dockerfile unpacks
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"{url}/../wheelhouse/other-1.0-py3-none-any.whl")
        with serve_wheels(wanted[:1], "tfmatrix/tf2.15-cpu:abc") as second:      # the same tag built twice at once
            assert second != url and urllib.request.urlopen(second + "/").read()
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/", timeout=2)
    assert house.joinpath("six-1.16.0-py2.py3-none-any.whl").read_bytes() == b"wheel 0"     # links, never moved

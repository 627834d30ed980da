"""``collect --prometheus`` bad input: exit 2 (input) or 1 (unreachable), one line, no traceback.

In-process ``main(argv)``; the only traffic is to closed loopback ports.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_balancer.cli.main import main

CLOSED = "127.0.0.1:1"


@pytest.mark.parametrize(("extra", "code", "words"), [
    (["--since", "6h"], 2, "--since and --prometheus-mapping need --prometheus URL"),
    (["--prometheus", "http://127.0.0.1:1"], 2, "--prometheus needs --since"),
    (["--prometheus", "ftp://x", "--since", "1h"], 2, "--prometheus 'ftp://x' is not an http(s) URL"),
    (["--prometheus", "http://u:secret@127.0.0.1:1", "--since", "1h"], 2, "--prometheus: the URL holds credentials"),
    (["--prometheus", "http://127.0.0.1:1", "--since", "1h", "--rounds", "3"], 2, "live collection"),
    (["--prometheus", "http://127.0.0.1:1", "--since", "soon"], 2, "--since"),
    (["--prometheus", "http://127.0.0.1:1", "--since", "1h"], 1, "cannot reach Prometheus at http://127.0.0.1:1"),
    (["--prometheus", "http://127.0.0.1:1", "--since", "1h", "--prometheus-mapping", "MISSING"], 2,
     "--prometheus-mapping"),
])
def test_bad_prometheus_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], code: int,
                              words: str) -> None:
    extra = [str(tmp_path / "nope.json") if a == "MISSING" else a for a in extra]
    rc = main(["collect", "--bootstrap", CLOSED, "--out", str(tmp_path / "out"), *extra])
    err = capsys.readouterr().err
    assert rc == code, err
    assert words in err
    assert "Traceback" not in err and "secret" not in err
    assert err.strip().splitlines()[0].startswith(("error:", "usage:")) or err.count("error:") == 1

"""The writers outside the CLI commands go through files/outputs too: the simulator's sample files
(``sim/samples.write_jsonl`` / ``write_parquet``) and the streaming job's list of emitted windows. Seeded
Hypothesis cases put user files around and at the writers' target names and check that nothing but a
target regular file is ever replaced, that a folder or named pipe at a target name is refused without
being touched, that a write failing half-way leaves the old file whole, and that no temporary file stays."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_balancer.errors import InputError
from kafka_balancer.sim.cluster import ClusterSpec, generate
from kafka_balancer.sim.samples import SampleSpec, simulate, write_jsonl, write_parquet

SETTINGS = settings(max_examples=25, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def rounds() -> list[dict[str, pa.Table]]:
    snap = generate(ClusterSpec(brokers=3, racks=0, topics=2, partitions=6), seed=1)
    return simulate(snap, SampleSpec(windows=2), seed=1).rounds


def _targets(rounds: list[dict[str, pa.Table]], tmp: Path, kind: str) -> list[str]:
    """The relative names a writer writes (learned from a clean run)."""
    out = tmp / f"probe-{kind}"
    (write_jsonl if kind == "jsonl" else write_parquet)(rounds, out)
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())


def _state(root: Path) -> dict[str, str]:
    """Every entry under ``root``: its kind and, for files, a checksum."""
    seen = {}
    for p in sorted(root.rglob("*")):
        st_ = os.lstat(p)
        if stat.S_ISREG(st_.st_mode):
            seen[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            seen[str(p.relative_to(root))] = "dir" if stat.S_ISDIR(st_.st_mode) else "fifo"
    return seen


# What a user may have in the folder: files of their own (some named like a writer's temporary files or a
# target plus .tmp), and at a target's name a regular file, a folder or a named pipe.
_own = st.lists(st.sampled_from(["notes.txt", ".samples.jsonl.tmp", "samples.jsonl.tmp", ".part-00000.parquet.x",
                                 "keep.jsonl", "parquet/broker/mine.txt", "parquet/readme"]), unique=True, max_size=4)


@SETTINGS
@given(kind=st.sampled_from(["jsonl", "parquet"]), own=_own,
       at_target=st.sampled_from(["none", "file", "dir", "fifo"]), which=st.integers(0, 50))
def test_sample_writers_lose_nothing(rounds: list[dict[str, pa.Table]], tmp_path_factory: pytest.TempPathFactory,
                                     kind: str, own: list[str], at_target: str, which: int) -> None:
    tmp = tmp_path_factory.mktemp("w")
    targets = _targets(rounds, tmp, kind)
    out = tmp / "out"
    for name in own:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(f"user file {name}".encode())
    target = out / targets[which % len(targets)]
    target.parent.mkdir(parents=True, exist_ok=True)
    if at_target == "file":
        target.write_bytes(b"an older sample file")
    elif at_target == "dir":
        target.mkdir()
        (target / "inside").write_bytes(b"x")
    elif at_target == "fifo":
        os.mkfifo(target)
    before = _state(out)
    writer = write_jsonl if kind == "jsonl" else write_parquet
    if at_target in ("dir", "fifo"):
        with pytest.raises(InputError) as err:
            writer(rounds, out)
        assert "--out" in err.value.message and target.name in err.value.message
        after = _state(out)
        # The folder or pipe is untouched, every user file too; targets written before it may be new.
        assert {k: v for k, v in after.items() if k in before} == before
        assert not [k for k in after if k not in before and k not in targets and k not in _dirs(targets)]
        return
    writer(rounds, out)
    after = _state(out)
    for name, digest in before.items():
        if name not in targets:
            assert after[name] == digest, f"{name} was changed"
    assert set(after) - set(before) <= set(targets) | _dirs(targets), "a stray file was left"
    assert sorted(k for k in after if k in targets) == targets


def _dirs(names: list[str]) -> set[str]:
    return {str(p) for n in names for p in Path(n).parents if str(p) != "."}


def _failing(rounds: list[dict[str, pa.Table]], after: int) -> Iterator[dict[str, pa.Table]]:
    for i, rnd in enumerate(rounds):
        if i == after:
            raise RuntimeError("the producer of the rounds failed")
        yield rnd


@SETTINGS
@given(kind=st.sampled_from(["jsonl", "parquet"]), fail_after=st.integers(0, 10))
def test_a_writer_failing_half_way_keeps_the_old_files_whole(
        rounds: list[dict[str, pa.Table]], tmp_path_factory: pytest.TempPathFactory, kind: str,
        fail_after: int) -> None:
    tmp = tmp_path_factory.mktemp("f")
    targets = _targets(rounds, tmp, kind)
    out = tmp / "out"
    for t in targets:
        (out / t).parent.mkdir(parents=True, exist_ok=True)
        (out / t).write_bytes(b"old " + t.encode())
    before = _state(out)
    writer: Any = write_jsonl if kind == "jsonl" else write_parquet
    with pytest.raises(RuntimeError):
        writer(_failing(rounds, fail_after), out)
    after = _state(out)
    assert set(after) == set(before), "a temporary file was left behind"
    for name, digest in before.items():  # each file is either the old one or a complete new one
        if after[name] != digest:
            data = (out / name).read_bytes()
            if kind == "jsonl":
                assert data.endswith(b"\n") and not data.startswith(b"old ")
            else:
                assert data[:4] == b"PAR1" and data[-4:] == b"PAR1"


@pytest.mark.parametrize("content", [b"", b"[1, 2", b'{"a": 1}', b'["x"]', b"[true]", b"\xff\xfe", b"[1.5]"])
def test_a_damaged_emitted_list_is_named_not_a_traceback(tmp_path: Path, content: bytes) -> None:
    from kafka_balancer.pipeline.streaming import emitted_windows

    (tmp_path / "emitted.json").write_bytes(content)
    with pytest.raises(InputError) as err:
        emitted_windows(tmp_path)
    assert "emitted.json" in err.value.message or "emitted.json" in (err.value.hint or "")
    assert (tmp_path / "emitted.json").read_bytes() == content


def test_an_emitted_list_that_is_a_fifo_never_blocks(tmp_path: Path) -> None:
    from kafka_balancer.pipeline.streaming import emitted_windows

    os.mkfifo(tmp_path / "emitted.json")
    with pytest.raises(InputError):
        emitted_windows(tmp_path)
    assert emitted_windows(tmp_path / "nothing-yet") == []

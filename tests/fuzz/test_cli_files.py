"""files/outputs.py and files/inputs.py: nothing the user had is lost, nothing blocks; and what only a real
process shows (a full disk on stdout, a closed pipe, arguments that are not UTF-8, a named pipe as input)."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from kafka_balancer.errors import InputError
from kafka_balancer.files import inputs, outputs

from .harness import check, run_cli, run_subprocess, tree_state


def test_write_replaces_atomically_and_touches_nothing_else(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    target.write_bytes(b"old")
    os.chmod(target, 0o640)
    (tmp_path / "plan.json.tmp").write_bytes(b"the user's")
    outputs.write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the file's mode is kept
    assert (tmp_path / "plan.json.tmp").read_bytes() == b"the user's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json", "plan.json.tmp"]


def test_a_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        outputs.write_bytes(tmp_path / "a" / "b.json", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a" / "b.json").stat().st_mode) == 0o644


def test_a_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "p.png"
    target.write_bytes(b"old plot")
    with pytest.raises(RuntimeError), outputs.replacing(target, "--plot") as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("the writer failed half way")
    assert target.read_bytes() == b"old plot"
    assert [p.name for p in tmp_path.iterdir()] == ["p.png"]


def test_a_symlink_is_followed_and_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_bytes(b"old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    outputs.write_bytes(link, b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"


@pytest.mark.parametrize("kind", ["fifo", "dir", "device"])
def test_special_targets_are_refused(tmp_path: Path, kind: str) -> None:
    path = {"fifo": tmp_path / "f", "dir": tmp_path / "d", "device": Path("/dev/null")}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    before = tree_state([tmp_path])
    with pytest.raises(InputError, match="--out"):
        outputs.check_output_file(path, "--out")
    with pytest.raises(InputError, match="--out"):
        outputs.write_bytes(path, b"x", "--out")
    assert tree_state([tmp_path]) == before
    if kind == "device":
        assert stat.S_ISCHR(os.stat(path).st_mode)


def test_an_output_that_is_an_input_is_refused(tmp_path: Path) -> None:
    snap = tmp_path / "s.json"
    snap.write_bytes(b"{}")
    os.link(snap, tmp_path / "hard.json")
    for out in (snap, tmp_path / "." / "s.json", tmp_path / "hard.json"):
        with pytest.raises(InputError, match="is also the input --snapshot"):
            outputs.check_output_file(out, "--out", inputs=[("--snapshot", snap)])
    samples = tmp_path / "samples"
    samples.mkdir()
    with pytest.raises(InputError, match="inside the input folder --samples"):
        outputs.check_output_file(samples / "r.json", "--report", inputs=[("--samples", samples)])
    with pytest.raises(InputError, match="holds the input --samples"):
        outputs.check_output_dir(tmp_path, "--tables", inputs=[("--samples", samples)])
    outputs.check_output_file(tmp_path / "new.json", "--out", inputs=[("--snapshot", snap)])


def test_a_fifo_input_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="named pipe"):
        inputs.read_bytes(fifo, "--snapshot")
    with pytest.raises(InputError, match="is a device"):
        inputs.read_bytes("/dev/zero", "--snapshot")


def test_inputs_name_flag_and_file(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    with pytest.raises(InputError, match=r"--config .*latin.txt is not UTF-8 text \(byte 3"):
        inputs.read_text(tmp_path / "latin.txt", "--config")
    with pytest.raises(InputError, match="no such file"):
        inputs.read_bytes(tmp_path / "nope", "--plan")
    with pytest.raises(InputError, match="a parent of it is a file"):
        inputs.read_bytes(tmp_path / "latin.txt" / "x", "--plan")


# --- real processes -------------------------------------------------------------------------------------------

def test_full_disk_on_stdout(tmp_path: Path) -> None:
    with open("/dev/full", "wb") as full:
        run = run_subprocess(["group", "locate", "--group", "g", "--partitions", "50"], stdout=full.fileno(),
                             watch=[tmp_path])
    check(run, 1, "cannot write to standard output: No space left on device")


def test_closed_pipe_on_stdout(tmp_path: Path) -> None:
    proc = subprocess.Popen([str(Path(os.sys.executable).parent / "kafka-balancer"), "simulate", "cluster",
                             "--preset", "paper", "--partitions", "3000", "--out", "-"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.read(100)
    proc.stdout.close()  # the reader goes away, as `| head -c 100` does
    _, err = proc.communicate(timeout=120)
    assert b"Traceback" not in err and b"Exception ignored" not in err, err.decode()
    assert proc.returncode == 1


def test_arguments_that_are_not_utf8(tmp_path: Path) -> None:
    run = run_subprocess(["group", "locate", "--group", b"g\xff", "--partitions", "50"], watch=[tmp_path])
    check(run, 2, "--group 'g\\xff' is not valid UTF-8")
    # a path that is not UTF-8 is a fine path: the snapshot is written there and the name printed as given
    out = os.fsencode(tmp_path) + b"/caf\xe9.json"
    run = run_subprocess(["simulate", "cluster", "--preset", "paper", "--out", out], watch=[tmp_path])
    check(run, 0, outputs=[os.fsdecode(out)])
    assert os.path.exists(out)


def test_a_named_pipe_snapshot_in_a_real_process(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "s.json")
    run = run_subprocess(["plan", "--snapshot", str(tmp_path / "s.json"), "--out", str(tmp_path / "p.json")],
                         watch=[tmp_path], timeout=60)
    check(run, 2, "is a named pipe")


def test_no_library_warnings_on_a_normal_run(tmp_path: Path) -> None:
    """Warnings enabled as a developer would (PYTHONWARNINGS=default): a normal run prints none."""
    run = run_subprocess(["simulate", "cluster", "--preset", "paper", "--topics", "3", "--partitions", "12",
                          "--out", str(tmp_path / "s.json")], watch=[tmp_path])
    check(run, 0, outputs=[tmp_path / "s.json"])
    run = run_subprocess(["plan", "--snapshot", str(tmp_path / "s.json"), "--out", str(tmp_path / "p.json"),
                          "--plot", str(tmp_path / "p.png")], watch=[tmp_path])
    check(run, 0, outputs=[tmp_path / "p.json", tmp_path / "p.png"])
    assert "Warning" not in run.err, run.err


def test_classes_found_by_the_bad_input_sweep(tmp_path: Path) -> None:
    """bench/bad_input_sweep.py found these: a symbolic link loop as an output (an internal error), a named
    pipe as --command-config (cancel, execute, collect, consumers advise hung), a device as serve's
    --config (serve ran for ever)."""
    snap = tmp_path / "s.json"
    check(run_subprocess(["simulate", "cluster", "--preset", "paper", "--topics", "2", "--partitions", "6",
                          "--out", str(snap)], watch=[tmp_path]), 0, outputs=[snap])
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    check(run_cli(["plan", "--snapshot", str(snap), "--out", str(loop)], watch=[tmp_path]), 2, ["--out", "loop"])
    for argv in (["collect", "--bootstrap", "127.0.0.1:1", "--rounds", "1", "--out", str(tmp_path / "o")],
                 ["serve", "--bootstrap", "127.0.0.1:1", "--dry-run", "--port", "1"]):  # the sweep's second seed
        check(run_cli([*argv, "--local-cluster", str(loop)], watch=[tmp_path]), 2,
              ["--local-cluster", "symbolic link loop"])
    assert loop.is_symlink()
    fifo = tmp_path / "client.properties"
    os.mkfifo(fifo)
    run = run_subprocess(["execute", "--plan", str(snap), "--bootstrap", "127.0.0.1:1", "--command-config", str(fifo)],
                         watch=[tmp_path], timeout=60)
    check(run, 2, "--command-config")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)

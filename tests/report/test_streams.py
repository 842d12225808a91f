"""`discard_further_output`: a stream that cannot be written to any more is pointed at /dev/null."""
from __future__ import annotations

import io
import os

from duetbench.report.streams import discard_further_output


def test_a_stream_whose_reader_is_gone_writes_to_dev_null_after() -> None:
    read, write = os.pipe()
    stream = os.fdopen(write, "w")
    os.close(read)  # the reader goes away: a write would raise BrokenPipeError
    try:
        discard_further_output(stream)
        stream.write("dropped\n")
        stream.flush()  # no BrokenPipeError: the descriptor is /dev/null's now
        assert os.path.samestat(os.fstat(stream.fileno()), os.stat(os.devnull))
    finally:
        stream.close()


def test_a_stream_without_a_descriptor_is_left_alone() -> None:
    before = set(os.listdir("/proc/self/fd"))
    discard_further_output(io.StringIO())  # no fileno(): nothing to point anywhere, and no error
    assert set(os.listdir("/proc/self/fd")) == before  # /dev/null was not left open

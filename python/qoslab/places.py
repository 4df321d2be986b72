"""Output places, checked before any work starts.

A run that would end by failing to write its report wastes the run; so ``--out``,
``--report`` and ``--pcap`` are checked first, and a bad place is bad input (exit 2, a
message naming the option, what was expected and what was found). A disk that fills
during the run is not bad input: the command stops with exit 1 and one line, and what
was written before stays (see :func:`disk_full`).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from qoslab.errors import InputError, Problem

_DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def _problem(option: str, message: str, *, expected: str, found: str) -> InputError:
    return InputError(option, [Problem(message, expected=expected, found=found)])


def output_dir(path: Path, option: str) -> Path:
    """Make ``path`` a directory this process can write into, or say why it cannot.

    Missing parents are made, as ``mkdir -p`` does.

    >>> output_dir(Path("/dev/null"), "--report")
    Traceback (most recent call last):
    ...
    qoslab.errors.InputError: --report: cannot write the output there: it is not a directory
        expected: a directory (made if missing)
        found:    '/dev/null', a character device
    """
    kind = _kind(path)
    if kind is not None and kind != "a directory":
        raise _problem(
            option,
            "cannot write the output there: it is not a directory",
            expected="a directory (made if missing)",
            found=f"'{path}', {kind}",
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        blocker = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        found = f"'{blocker}' is {_kind(blocker)}" if blocker is not None else f"'{path}': {err.strerror or err}"
        raise _problem(
            option, "cannot make the output directory", expected="a directory that can be made", found=found
        ) from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise _problem(
            option,
            "cannot write into the output directory",
            expected="a writable directory",
            found=f"'{path}': permission denied",
        )
    return path


def output_file(path: Path, option: str) -> Path:
    """Check that ``path`` can be written as a file: not a directory, its folder writable."""
    kind = _kind(path)
    if kind == "a directory":
        raise _problem(
            option, "cannot write the file there: it is a directory", expected="a file name", found=f"'{path}'"
        )
    parent = path.parent if str(path.parent) else Path(".")
    if _kind(parent) != "a directory":
        raise _problem(
            option,
            "cannot write the file there: its folder does not exist",
            expected="a file in an existing directory",
            found=f"'{parent}'",
        )
    if not os.access(parent, os.W_OK | os.X_OK) or (kind is not None and not os.access(path, os.W_OK)):
        raise _problem(
            option, "cannot write the file there", expected="a writable place", found=f"'{path}': permission denied"
        )
    return path


def disk_full(err: BaseException) -> bool:
    """Whether ``err`` is the disk (or a quota, or a file size limit) running out."""
    return isinstance(err, OSError) and err.errno in _DISK_FULL


def _kind(path: Path) -> str | None:
    """What is at ``path``, in words, or None when nothing is."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return "below a file"
    except OSError as err:
        return f"unreadable ({err.strerror})"
    import stat

    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"

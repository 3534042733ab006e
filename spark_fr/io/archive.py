"""Zip archives holding one data file (the HARFF benchmark sets are distributed that way).

The member is extracted once per archive version (path, size and modification time) into a directory
under the system's temporary directory and reused afterwards. Local mode reads it from there; on a
cluster, unzip the archive onto storage the executors can read instead.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import zipfile

from ..errors import InputError

DATA_SUFFIXES = (".arff", ".harff")


def data_members(names) -> list:
    """Archive members that are data files (macOS resource forks and directories left out)."""
    return [n for n in names if n.lower().endswith(DATA_SUFFIXES) and not n.startswith("__MACOSX/")
            and not os.path.basename(n).startswith("._")]


def extract_single(path: str) -> str:
    """Extract the one ARFF/HARFF member of a zip archive and return the extracted file's path.

    Parameters
    ----------
    path : str
        A local ``.zip`` file.

    Returns
    -------
    str
        Path of the extracted member (reused when the archive has not changed).
    """
    try:
        with zipfile.ZipFile(path) as z:
            members = data_members(z.namelist())
            if len(members) != 1:
                raise InputError(f"{path}: expected exactly one .arff or .harff file in the archive, found "
                                 f"{len(members)}{': ' + ', '.join(members[:5]) if members else ''}")
            st = os.stat(path)
            key = hashlib.sha1(f"{os.path.abspath(path)}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:16]
            target_dir = os.path.join(tempfile.gettempdir(), "spark_fr_unzipped", key)
            target = os.path.join(target_dir, os.path.basename(members[0]))
            if not os.path.exists(target):
                os.makedirs(target_dir, exist_ok=True)
                partial = target + f".part{os.getpid()}"
                with z.open(members[0]) as src, open(partial, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                os.replace(partial, target)  # atomic: a concurrent reader never sees half a file
            return target
    except zipfile.BadZipFile:
        raise InputError(f"{path}: not a readable zip archive") from None

"""Where the benchmark finds things: the repository, ``jobs/rank.py``, the peer scripts, the shared tools.

The shared folder (``../shared`` next to the repository) holds the CLUS tools (``make_synthetic.py``,
``run_clus.py``) and the real data sets.
"""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RANK_JOB = ROOT / "jobs" / "rank.py"
PEER_SCRIPTS = ROOT / "jobs" / "peers"
SHARED = ROOT.parent / "shared"
CLUS_TOOLS = SHARED / "tools" / "clus"
DATASETS = SHARED / "datasets"

"""Where things are, for every test module wherever it lives under tests/ (one place instead of
``Path(__file__).parents[n]`` counted per module, which a move to another folder would break silently).

Decision: the suite's own fixtures (conftest.py) and helpers import these too; a module that needs the project
root, the shared data or the job script takes them from here.
"""
from pathlib import Path

#: the project's root (the checkout: spark_fr/, jobs/, conf/, docs/, tests/)
ROOT = Path(__file__).resolve().parents[1]
#: this folder
TESTS = ROOT / "tests"
#: ../shared beside the project: the datasets, read in place, and the tools (CLUS)
SHARED = ROOT.parent / "shared"
DATASETS = SHARED / "datasets"
CLUS_TOOLS = SHARED / "tools" / "clus"
#: the ranking job
JOB = ROOT / "jobs" / "rank.py"

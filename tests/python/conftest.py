import sys
from pathlib import Path

# opinfo.py and the opdb_*.py databases are imported as plain modules by the tests.
sys.path.insert(0, str(Path(__file__).parent))

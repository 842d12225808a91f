"""Importing measurements made by other tools into IterationTables and stored campaigns (docs/import.md)."""
from ._table import Imported
from .csv_mapping import CsvMapping, read_csv
from .duetprocess import read_duetprocess
from .gbench import read_gbench
from .harness_json import read_hyperfine, read_jmh, read_pyperf
from .store import store_imported

__all__ = ["CsvMapping", "Imported", "read_csv", "read_duetprocess", "read_gbench", "read_hyperfine", "read_jmh",
           "read_pyperf", "store_imported"]

"""Data types every layer imports (store, importers, analyze, report): kept here so no layer has to
import another's internals to name them."""

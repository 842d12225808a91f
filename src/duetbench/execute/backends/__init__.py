"""Execution backends of `duet run`: the interface (`base`), the registry of names, and the backends."""

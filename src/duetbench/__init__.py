"""duetbench: is B faster or slower than A, by how much, and how sure — on noisy machines."""

from duetbench import _blas

__version__ = "0.1.0"

# Before anything imports numpy: its BLAS threads would otherwise spin beside what we measure (_blas.py).
_blas.install()

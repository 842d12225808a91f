"""duetbench: is B faster or slower than A, by how much, and how sure — on noisy machines."""

__version__ = "0.1.0"

"""The parts of the benchmark driver (bench/run.py), one concern per module."""

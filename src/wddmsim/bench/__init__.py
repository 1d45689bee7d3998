"""Benchmarks: each measures one path of design.md section 5 against a baseline timed in the same process.

Shared machines drift +-20 % between runs, so a goal is a ratio (project / same-run baseline, higher is
better) or a figure independent of machine speed.  Benchmarks are never asserted in tests.
"""

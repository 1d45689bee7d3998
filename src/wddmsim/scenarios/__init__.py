"""Runnable scenarios: scripted workloads over one adapter, each verifying every byte it moves.

``rig`` gives a scenario (or a test) an adapter plus the handful of helpers every paging story needs; ``tour``
is the built-in default of ``wddmsim run``: every paging operation of ``DxgkDdiBuildPagingBuffer`` exercised
end to end and checked against an independent expectation.
"""

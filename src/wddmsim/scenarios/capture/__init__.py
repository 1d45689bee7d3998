"""Captured allocation traces of real applications, turned into scenarios (issue 23): the GPGMM capture format
(:mod:`~wddmsim.scenarios.capture.gpgmm`) and its scenario form (:mod:`~wddmsim.scenarios.capture.scenario`)."""

"""Conformance of a driver's ``DxgkDdiBuildPagingBuffer``: ``wddmsim check-driver`` (issue 21, item 4).

What this layer models: dxgkrnl's side of the paging DDI as a test harness -- an adapter around the driver under
test (:mod:`.rig`), cases with independent expectations for every operation (:mod:`.cases`), the checks each
case goes through (:mod:`.checks`), and the report (:mod:`.report`).  It sits beside the scenarios: it composes
an adapter through the composition root and drives the DDI itself.
"""

from wddmsim.conformance.run import Report, check_driver

__all__ = ["Report", "check_driver"]

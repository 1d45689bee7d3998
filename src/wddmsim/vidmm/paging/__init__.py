"""The paging path's plumbing: the caller's loop of ``DxgkDdiBuildPagingBuffer`` (stream), the paging buffers
(buffers), where the GPU fetches them (home), and the system paging process whose address space they run in
(process).
"""

"""Read-only views: they render snapshots, event logs and paging-buffer bytes, and never change a model."""

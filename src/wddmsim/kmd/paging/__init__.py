"""One module per family of ``DXGK_BUILDPAGINGBUFFER_OPERATION``: each turns one payload into packets."""

"""The shipped test kit: fakes that plug into the DDI seam and misbehave on purpose.

Users testing their own VidMm logic or driver can use them; nothing in the library imports this package.
"""

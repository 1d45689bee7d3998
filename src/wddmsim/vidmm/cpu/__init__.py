"""CPU access to allocations: ``pfnLockCb``/``pfnLock2Cb`` and their unlocks (locks), the rules of their arguments
(rules), and the swizzling ranges a segment-model lock sees a surface through (swizzle).
"""

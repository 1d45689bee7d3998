"""VidMm's view of the GPU's engines: the scheduler that numbers submissions and waits on their fences, and the
adapter-reset path (TDR) where every fatal driver error goes.
"""

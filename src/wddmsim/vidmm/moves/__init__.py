"""Moving one allocation: why it moves (causes: ``MoveCause``, ``Destination``), the paging operations of a move in
the documented order (mover), and the system paging process's scratch area content goes through (scratch).
"""

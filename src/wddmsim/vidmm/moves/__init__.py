"""Moving one allocation: what a move's cause means to it and who hears of it (causes; the causes and destinations
themselves are the leaf ``move_kinds``), the paging operations of a move in the documented order (mover), and the system paging process's scratch area content goes through (scratch).
"""

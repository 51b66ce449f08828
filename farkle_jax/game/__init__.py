"""The game: rules as data, the combinatorics of one roll, the state layout.

Nothing here depends on the solver or on strategies (docs/model.md §1, §2).
"""

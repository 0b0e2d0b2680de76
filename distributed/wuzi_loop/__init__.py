"""Wuzi's self-play generation loop (selfplay -> train -> SPRT gating ->
promotion) as Ray tasks, with its data in a storage given by URI."""

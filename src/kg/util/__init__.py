"""Small helpers every stage may use: atomic writes, a paused collector, the stage clock."""

"""The project: its folder, its settings read once, start-up upkeep, and OpenCode's own session store."""

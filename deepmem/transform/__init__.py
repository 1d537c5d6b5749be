"""The per-request transform: the plan of one request, its schedule of jumps, and what each old part becomes."""

"""Page sizes of the console's long tables (no Django here: the benchmarks' clients read them too)."""

WATCH_PAGE_SIZE = 50  # rows a page of the watch table shows: the page costs the same whatever the number of watches

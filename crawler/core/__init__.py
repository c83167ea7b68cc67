"""The crawl's core: what every worker and the master share.

* :mod:`.defaults` -- the default of every tunable of the project's own components;
* :mod:`.config` -- the environment variables a worker reads, mapped onto settings;
* :mod:`.keys` / :mod:`.layout` -- every Redis key of a crawl, and their layout on a cluster;
* :mod:`.records` -- the records workers and the master exchange through Redis;
* :mod:`.flow` -- flow control: components ask the scheduler to stop handing out requests;
* :mod:`.listings` -- the listing pages a crawl read, and what their cards showed;
* :mod:`.series` -- the per-minute series of pages and items the dashboard charts;
* :mod:`.items` / :mod:`.itemkinds` -- the items, typed, and the schema each is held to;
* :mod:`.signals` -- this project's own signals;
* :mod:`.sites` -- what "the same site" means;
* :mod:`.startup` -- errors that stop a worker before it crawls.

Nothing here imports from the rest of ``crawler``: every other package may import it.
"""

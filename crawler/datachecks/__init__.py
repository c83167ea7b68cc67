"""Data checks: every site's data checked while it is crawled (``docs/data-checks.md``).

* :mod:`.figures` -- a site's figures (rows, coverage and provenance per field, the
  spread of values, pages that gave no product, uncertain rows), bounded in size;
* :mod:`.store` -- the figures shared by every worker in Redis (one script call per
  site and sync);
* :mod:`.checks` -- the checks, declared once, and :func:`~.checks.run_checks`, the one
  implementation every surface calls;
* :mod:`.uncertain` -- which fields of a row were read uncertainly (``uncertain``);
* :mod:`.report` -- the checks of a whole crawl, as the master reads them.

The worker's side is :class:`crawler.extensions.datachecks.DataChecks`.
"""

"""A real headless browser where a page needs one, and only there.

A browser page costs tens of times a plain fetch, so the cheap path comes first:
a framework's embedded state is read from the HTML (:mod:`crawler.extraction.embedded`)
and no browser starts for such shops. Pages that need one go through Debian's
Chromium, driven by scrapy-playwright. Follow a page through:

* :mod:`crawler.middlewares.rendering` -- ``BrowserRenderingMiddleware`` (downloader
  middleware): counts the requests a worker renders and marks those queued before
  their site was known (``meta["playwright"]``: a seed's ``render``,
  ``BROWSER_RENDERING``, a site remembered as needing a browser), and issues an
  application shell again, marked, keeping its lease;
* :mod:`.routing` -- ``BrowserRouting``: a request that needs a browser waits in the
  crawl's browser queue (``<spider>:browser_requests``), popped only by workers that
  render; a worker that renders none hands over any it meets;
* :mod:`.shell` -- is a page an application shell, and does its HTML give nothing?
* :mod:`.sites` -- ``BrowserSites``: the sites that need a browser, in
  ``<spider>:browser_sites``, shared by every worker;
* :mod:`.handler` -- ``BrowserDownloadHandler`` (``DOWNLOAD_HANDLERS``): Scrapy's HTTP/1.1
  handler, which hands a marked request to the crawler's renderer (Playwright is not
  imported by a worker that renders nothing);
* :mod:`.renderer` -- ``PageRenderer``: scrapy-playwright's handler, lazy, bounded
  (concurrency, time, bytes, requests), one context per site, restarted when it crashes
  or grows;
* :mod:`.guard` -- ``PageGuard``: every request of a rendered page answered by the
  worker's own HTTP client under the network rule, or refused with a reason;
* :mod:`.config` -- ``BrowserConfig``: the ``BROWSER_*`` settings and how Chromium is launched;
* :mod:`.errors` -- ``RenderFailed``; :mod:`.processes` -- the browser's memory, a last-resort kill.

The whole story, the settings, the safety and the costs: ``docs/browser.md``.
"""

"""How a site is crawled: the policies every request of a seed carries.

* :mod:`.seeds` -- seed validation, shared by the master and the workers;
* :mod:`.scope` -- a seed's strategy and how far it is crawled;
* :mod:`.sitemaps` -- where a shop lists what it sells, read bounded;
* :mod:`.firstpage` -- the one URL of a listing's first page;
* :mod:`.politeness` -- a request budget per site, shared by every worker, that backs off;
* :mod:`.retrypolicy` -- which failures are retried, how often and after how long.
"""

"""``python -m master serve``: the crawl's control room in the browser and its JSON API.

* :mod:`master.web.app`: the application factory (:func:`create_app`);
* :mod:`master.web.config`: what the server was started with, and the dependencies
  routes receive (the crawl's Redis client and key names, the product store);
* :mod:`master.web.security`: the token, the browser session, CSRF, body limits;
* :mod:`master.web.api`: the JSON API under ``/api/v1``;
* :mod:`master.web.pages`: the dashboard page, the login form, ``/healthz``;
* ``templates/`` and ``static/``: the page and its small script (no build step).

Every route calls the function the matching command calls (``master.inspection``,
``master.control``, ``master.seeding``, ``master.deadletters``, ``master.stores``,
``master.catalog``); none holds logic of its own.
"""

"""The master: the crawl's control plane, a command-line tool talking to the shared Redis.

Run it as ``python -m master COMMAND`` from the repository root, or as
``python master.py COMMAND`` from this folder: both call :func:`master.cli.main`.

==============  =================================================================
module          job
==============  =================================================================
``cli``         the parser, the context every command gets, ``main()``, exit codes
``commands``    one module per command (``seed``, ``status``, ``pause``, ``resume``,
                ``report``, ``reset``, ``dead``, ``invalid``, ``metrics``,
                ``export``, ``recrawl``, ``bench``): its sub-parser and its handler;
                ``commands.base``: exit codes, output, argument types they share
``connection``  the Redis client, and the one-line messages for Redis failures
``seeding``     validating seed files and pushing them in batches (one round trip each)
``inspection``  reading the crawl's state for ``status`` and ``report`` (plain dicts)
``render``      the human tables of ``status`` and ``report``
``control``     ``pause``, ``resume`` and ``reset``
``deadletters``  listing, requeueing and clearing dead letters; listing invalid items
==============  =================================================================

Only ``reset`` and ``dead clear`` / ``dead requeue`` delete shared state.
"""

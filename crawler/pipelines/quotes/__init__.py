"""The quote stores: the ``finance`` spider's items in PostgreSQL, MongoDB or SQLite.

=============================================  =====  ==========================================
pipeline                                       order  active when (and the spider yields quotes)
=============================================  =====  ==========================================
``quotes.postgres.PostgresQuotePipeline``        330  ``POSTGRES_DSN`` is set
``quotes.mongo.MongoQuotePipeline``              340  ``MONGO_URI`` is set
``quotes.embedded.EmbeddedQuotePipeline``        350  neither is set (SQLite file)
=============================================  =====  ==========================================

Each is its product store's class with the quote's tables: the connection,
outages, batching, retries and signals are the same (:mod:`crawler.pipelines`).
Tables ``quotes`` (the latest quote of each url) and ``quote_history`` (one row
per observation, unique on ``(url, as_of)``); what goes in them is decided by
:func:`crawler.pipelines.quote_record.batch_plan`. See ``docs/storage.md``.
"""

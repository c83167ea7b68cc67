"""How a worker reaches the network and Redis.

* :mod:`.network` -- the one network rule: which hosts and addresses may be connected to;
* :mod:`.resolver` -- that rule applied at connection time, to the address resolved;
* :mod:`.redis_client` -- the workers' Redis client, counting its round trips;
* :mod:`.quietlog` -- a warning that repeats while a condition lasts, logged once;
* :mod:`.outage` -- what a worker says while Redis or its store is out of reach.
"""

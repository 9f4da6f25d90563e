"""What the command lines share: checked argument types, worker processes, Ray's address.

* :mod:`agents.infra.cli_args`: argument types, every value checked when it is parsed;
* :mod:`agents.infra.worker_pool`: worker processes that die with their parent;
* :mod:`agents.infra.ray_address`: which Ray to connect to, decided before ``ray.init`` can hang.
"""
